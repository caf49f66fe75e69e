"""What the webhook answers: clawplane's diagnostics as refusals, references as warnings."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawplane.k8s.admission.registration import _holds, configuration, label_selector
from clawplane.k8s.admission.settings import Target, WebhookOptions
from clawplane.k8s.admission.verdict import MAX_WARNING, review, review_with

API = "clawplane.dev/v1alpha1"


def obj(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name, "namespace": "team"}, "spec": spec}


def test_an_objects_own_error_refuses_it_with_code_path_and_hint() -> None:
    verdict = review(obj("McpServer", "bad", command="node", env={"LD_PRELOAD": "/x.so"}), [])
    assert not verdict.allowed
    assert verdict.message.startswith("error[mcp.env-blocked] at spec.env.LD_PRELOAD: env 'LD_PRELOAD' is blocked")
    assert "(hint: remove it;" in verdict.message


def test_openclaws_schema_applies_to_passthrough_config() -> None:
    verdict = review(obj("Gateway", "default", config={"gateway": {"port": "x"}}), [])
    assert not verdict.allowed and "error[openclaw.type] at spec.config.gateway.port" in verdict.message


def test_a_reference_to_an_object_not_applied_yet_is_a_warning_only() -> None:
    verdict = review(obj("Agent", "bot", mcpServers=["notes"]), [])
    assert verdict.allowed and verdict.errors == []
    (warning,) = verdict.warnings
    assert warning.startswith("[ref.unresolved] McpServer 'notes' is not declared (at spec.mcpServers[0])")
    assert len(warning) <= MAX_WARNING
    assert review(obj("Agent", "bot", mcpServers=["notes"]), [obj("McpServer", "notes", command="node")]).warnings == []


def test_a_problem_with_the_rest_of_the_namespace_refuses() -> None:
    verdict = review(obj("Gateway", "second"), [obj("Gateway", "first")])
    assert not verdict.allowed and "error[gateway.multiple]" in verdict.message


def test_an_update_is_checked_against_the_others_not_its_old_self() -> None:
    old = obj("Gateway", "only")
    assert review(obj("Gateway", "only", config={"gateway": {"port": 18789}}), [old]).allowed


def test_a_kind_that_is_not_clawplanes_is_admitted() -> None:
    assert review({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, []).allowed


def test_many_errors_are_cut_with_a_count() -> None:
    env = {f"LD_{'X' * 200}{n}": "1" for n in range(60)} | {"LD_PRELOAD": "x"}
    verdict = review(obj("McpServer", "bad", command="node", env=env), [])
    assert not verdict.allowed and len(verdict.errors) == 61 and len(verdict.message) < 4200
    shown = verdict.message.count("error[mcp.env-blocked]")
    assert verdict.message.endswith(f"; and {61 - shown} more (run `clawplane validate` on the object)")


@pytest.mark.parametrize(
    ("text", "selector"),
    [
        ("clawplane.dev/shard=a", {"matchLabels": {"clawplane.dev/shard": "a"}}),
        ("a==b, c!=d", {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["d"]}]}),
        ("tier in (x, y),!legacy,team", {"matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["x", "y"]},
            {"key": "legacy", "operator": "DoesNotExist"},
            {"key": "team", "operator": "Exists"},
        ]}),
        ("env notin (prod)", {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}),
    ],
)  # fmt: skip
def test_a_shard_selector_becomes_the_webhooks_namespace_selector(text: str, selector: dict[str, Any]) -> None:
    assert label_selector(text) == selector


def test_a_malformed_selector_is_an_error() -> None:
    with pytest.raises(ValueError, match="cannot read the label selector"):
        label_selector("a=b,,(")


def test_the_configuration_sends_creates_and_updates_of_clawplane_kinds_only() -> None:
    wanted = configuration("clawplane", Target(service="clawplane-webhook", namespace="ops"), b"CA", namespaces=("a",))
    (hook,) = wanted["webhooks"]
    assert hook["rules"][0]["operations"] == ["CREATE", "UPDATE"] and hook["sideEffects"] == "None"
    assert hook["clientConfig"]["service"] == {"namespace": "ops", "name": "clawplane-webhook", "port": 443, "path": "/validate"}
    assert hook["failurePolicy"] == "Ignore" and hook["timeoutSeconds"] == 5
    assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == ["a"]
    # The API server's defaults do not count as a difference; a value of ours does.
    served = {**hook, "objectSelector": {}, "reinvocationPolicy": "Never"}
    assert _holds([served], wanted["webhooks"])
    assert not _holds([{**served, "failurePolicy": "Fail"}], wanted["webhooks"])
    assert not _holds([{**served, "namespaceSelector": {"matchLabels": {"x": "y"}}}], configuration(
        "clawplane", Target(url="https://127.0.0.1:1"), b"CA")["webhooks"])  # fmt: skip


def test_the_certificate_names_the_service_or_the_urls_host() -> None:
    options = WebhookOptions(port=9443, target=Target(service="hook", namespace="ops"))
    assert options.names() == {"hook", "hook.ops", "hook.ops.svc", "hook.ops.svc.cluster.local"}
    assert WebhookOptions(port=1, target=Target(url="https://127.0.0.1:1")).names() == {"127.0.0.1"}


# --- the incremental baseline ------------------------------------------------------------------

_NAMES = ["a", "b", "a.b", "a-b"]


def _object(kind: str, name: str, variant: int, version: int) -> dict[str, Any]:
    if kind == "McpServer":
        spec: dict[str, Any] = {"command": "node", "args": [str(variant)]}
        if variant == 3:
            spec["env"] = {"LD_PRELOAD": "x"}  # an error of its own
    elif kind == "Agent":
        spec = {"mcpServers": [_NAMES[variant % len(_NAMES)]]}  # may dangle
    else:
        spec = {"config": {"gateway": {"port": 18789 + variant}}}
    made = obj(kind, name, **spec)
    made["metadata"]["resourceVersion"] = str(version)
    return made


_STEP = st.tuples(
    st.sampled_from(["McpServer", "McpServer", "Agent", "Gateway"]),
    st.sampled_from(_NAMES),
    st.integers(0, 3),
    st.booleans(),  # delete instead of apply
)


@given(steps=st.lists(_STEP, min_size=1, max_size=14), probe=_STEP)
@settings(max_examples=60, deadline=None)
def test_a_baseline_carried_between_reviews_gives_the_verdict_a_fresh_one_gives(
    steps: list[tuple[str, str, int, bool]], probe: tuple[str, str, int, bool]
) -> None:
    live: dict[str, dict[str, Any]] = {}
    previous = None
    for version, (kind, name, variant, delete) in enumerate(steps, start=1):
        if delete:
            live.pop(f"{kind}/{name}", None)
        else:
            live[f"{kind}/{name}"] = _object(kind, name, variant, version)
        candidate = _object(probe[0], probe[1], probe[2], 10_000 + version)
        carried, previous = review_with(candidate, list(live.values()), previous)
        fresh = review(candidate, list(live.values()))
        assert (carried.allowed, carried.errors) == (fresh.allowed, fresh.errors)
        assert carried.warnings == fresh.warnings
