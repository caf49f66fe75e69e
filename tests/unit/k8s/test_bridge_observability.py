"""Bridge pods take the namespace Gateway's traces and audit settings: flags, env, reported gaps, hashes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from clawplane.k8s.adapter.observing import UNSUPPORTED, noted, of_pass
from clawplane.k8s.objects.bridgeobserve import BridgeObservability, bridge_observability
from clawplane.k8s.objects.children import Owner, server_deployment
from clawplane.k8s.objects.secretrefs import SecretReader
from clawplane.models import McpServerSpec, Observability

OWNER = Owner("McpServer", "time", "uid-1")
LITERAL = "literal-credential-3Xv9"


def observability(**fields: Any) -> Observability:
    return Observability.model_validate(fields)


def container(observe: BridgeObservability | None) -> dict[str, Any]:
    spec = McpServerSpec.model_validate({"transport": "stdio", "command": "uvx", "args": ["mcp-server-time"]})
    deploy = server_deployment("time", "ns", spec, owner=OWNER, image="img", config_hash="h", observe=observe)
    found: dict[str, Any] = deploy["spec"]["template"]["spec"]["containers"][0]
    return found


def test_traces_and_audit_become_bridge_flags_and_header_secrets_secret_key_refs() -> None:
    found = bridge_observability(
        observability(
            traces={
                "endpoint": "https://otel.example/v1/traces",
                "serviceName": "team-gw",
                "sampleRatio": 0.25,
                "headers": {
                    "Authorization": {"valueFrom": {"secretKeyRef": {"name": "otel", "key": "auth"}}},
                    "x-team": "blue",
                },
            },
            audit={"exportLogs": True},
        )
    )
    assert found.problems == ()
    c = container(found)
    argv = c["command"]
    cut = argv.index("--")
    flags = argv[:cut]
    assert argv[cut + 1 :] == ["uvx", "mcp-server-time"]
    pairs = {flags[i]: flags[i + 1] for i in range(len(flags) - 1) if flags[i].startswith("--")}
    assert pairs["--traces-endpoint"] == "https://otel.example/v1/traces"
    assert pairs["--service-name"] == "team-gw"
    assert pairs["--trace-sample-ratio"] == "0.25"
    assert [flags[i + 1] for i, f in enumerate(flags) if f == "--trace-header"] == [
        "Authorization=CLAWPLANE_TRACE_HEADER_0",
        "x-team=CLAWPLANE_TRACE_HEADER_1",
    ]
    assert "--audit-log" in flags and "--audit-export-logs" in flags and "--trace-payloads" not in flags
    env = {e["name"]: e for e in c["env"]}
    assert env["CLAWPLANE_TRACE_HEADER_0"] == {
        "name": "CLAWPLANE_TRACE_HEADER_0",
        "valueFrom": {"secretKeyRef": {"name": "otel", "key": "auth", "optional": True}},
    }
    assert env["CLAWPLANE_TRACE_HEADER_1"] == {"name": "CLAWPLANE_TRACE_HEADER_1", "value": "blue"}
    assert c["env"][-2:] == [env["CLAWPLANE_TRACE_HEADER_0"], env["CLAWPLANE_TRACE_HEADER_1"]]


def test_without_a_gateway_bridge_pods_keep_the_audit_log_and_no_traces() -> None:
    found = bridge_observability(None)
    assert found.args == ("--audit-log",) and found.env == () and found.problems == ()
    off = bridge_observability(observability(audit={"enabled": False, "exportLogs": True}))
    assert off.args == ()
    declared = bridge_observability(observability(traces={"recordPayloads": True}))
    assert declared.args[:2] == ("--traces-endpoint", "http://localhost:4318/v1/traces")
    assert "--trace-payloads" in declared.args
    # No Gateway renders as before this feature, but for the audit log.
    assert [a for a in container(None)["command"] if a.startswith("--audit")] == []


@pytest.mark.parametrize(
    ("header", "value", "says"),
    [
        (
            "Authorization",
            {"valueFrom": {"env": "OTEL_TOKEN"}},
            "valueFrom.env reads the operator's own envs",
        ),
        (
            "x-api-key",
            {"valueFrom": {"file": "/etc/otel/key"}},
            "valueFrom.file reads the operator's own files",
        ),
        ("Authorization", LITERAL, "is a literal credential"),
    ],
)
def test_a_header_a_pod_cannot_carry_is_left_out_and_reported_with_a_fix(
    header: str, value: Any, says: str
) -> None:
    found = bridge_observability(
        observability(traces={"endpoint": "http://c:4318/v1/traces", "headers": {header: value}})
    )
    (problem,) = found.problems
    assert f"spec.observability.traces.headers.{header}" in problem and says in problem
    assert "use valueFrom.secretKeyRef" in problem
    c = container(found)
    assert "--trace-header" not in c["command"]
    rendered = json.dumps(c)
    assert LITERAL not in rendered and "OTEL_TOKEN" not in rendered and "/etc/otel/key" not in rendered


def test_the_gateway_status_says_resolved_refs_false_until_fixed() -> None:
    found = bridge_observability(
        observability(traces={"headers": {"Authorization": {"valueFrom": {"env": "OTEL_TOKEN"}}}})
    )
    gateway = {"kind": "Gateway", "metadata": {"name": "default", "generation": 3}}
    fine = {
        "observedGeneration": 3,
        "conditions": [{"type": "ResolvedRefs", "status": "True", "reason": "AllResolved"}],
    }
    status = noted(fine, gateway, found)
    (cond,) = status["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("ResolvedRefs", "False", UNSUPPORTED)
    assert "use valueFrom.secretKeyRef" in cond["message"] and status["message"] == cond["message"]
    # A missing Secret, reported already, keeps its own message; a server's status is untouched.
    missing = {"conditions": [{"type": "ResolvedRefs", "status": "False", "reason": "SecretNotFound"}]}
    assert noted(missing, gateway, found) == missing
    assert noted(fine, {"kind": "McpServer", "metadata": {"name": "x"}}, found) == fine
    assert noted(fine, gateway, bridge_observability(None)) == fine


def cr(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec}


def digests(gateway_spec: dict[str, Any]) -> dict[str, str]:
    """``of_pass`` over a namespace without Secret references (the reader never asks the API)."""
    live = [
        cr("Gateway", "default", gateway_spec),
        cr("McpServer", "local", {"command": "uvx"}),
        cr("McpServer", "theirs", {"command": "uvx", "hosting": "consumer"}),
        cr("McpServer", "remote", {"url": "https://mcp.example/mcp"}),
        cr("McpServer", "off", {"command": "uvx", "enabled": False}),
    ]
    reader = SecretReader(None, "ns")  # type: ignore[arg-type]  # no reference: the API is never asked
    _found, by_key = asyncio.run(of_pass(live, reader, {}))
    return by_key


def test_only_pods_hashes_follow_the_gateways_observability() -> None:
    plain = digests({})
    assert set(plain) == {"McpServer/local"}
    traced = digests({"observability": {"traces": {"endpoint": "http://c:4318/v1/traces"}}})
    renamed = digests(
        {"observability": {"traces": {"endpoint": "http://c:4318/v1/traces", "serviceName": "x"}}}
    )
    exported = digests({"observability": {"audit": {"exportLogs": True}}})
    assert len({plain["McpServer/local"], traced["McpServer/local"], renamed["McpServer/local"],
                exported["McpServer/local"]}) == 4  # fmt: skip
    # What bridge pods do not take (skills, channels) leaves the pods' hashes alone.
    assert digests({"skills": {"load": {"extraDirs": ["x"]}}}) == plain


def test_metric_export_becomes_bridge_flags_to_the_traces_collector_or_the_one_beside_the_pod() -> None:
    with_traces = bridge_observability(
        observability(
            traces={"endpoint": "https://otel.example/v1/traces"},
            metrics={"export": True, "intervalSeconds": 15},
        )
    )
    assert with_traces.args == (
        "--traces-endpoint", "https://otel.example/v1/traces", "--metrics-export", "--metrics-interval", "15",
        "--audit-log",
    )  # fmt: skip
    assert "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" not in {e["name"] for e in with_traces.env}
    alone = bridge_observability(observability(metrics={"export": True}))
    assert "--metrics-export" in alone.args and "--traces-endpoint" not in alone.args
    assert {
        "name": "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "value": "http://localhost:4318/v1/metrics",
    } in alone.env
    off = bridge_observability(observability(metrics={"export": False}))
    assert "--no-metrics-export" in off.args and not off.env
    assert bridge_observability(observability()).digest != alone.digest
    # The flags reach the container's command.
    c = container(alone)
    assert "--metrics-export" in c["command"]
    assert {"name": "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "value": "http://localhost:4318/v1/metrics"} in c[
        "env"
    ]
