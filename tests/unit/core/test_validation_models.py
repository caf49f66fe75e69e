"""ModelProvider declarations, model references and the Gateway's session policy are validated."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models.session import byte_size, duration_ms
from clawplane.validation import validate_paths

HEAD = "apiVersion: clawplane.dev/v1alpha1\n"
LOCAL = HEAD + """kind: ModelProvider
metadata: {name: local}
spec:
  baseUrl: http://127.0.0.1:4000/v1
  apiKey: {valueFrom: {env: LOCAL_KEY}}
  models:
    - {id: llama-3.1-8b, contextWindow: 128000}
    - {id: qwen2.5-coder-32b}
---
"""


def run(tmp_path: Path, text: str) -> list[Diagnostic]:
    (tmp_path / "r.yaml").write_text(text, encoding="utf-8")
    return validate_paths([tmp_path]).diagnostics.sorted()


def agent(model: str) -> str:
    return HEAD + f"kind: Agent\nmetadata: {{name: a}}\nspec:\n  model: {model}\n"


def of(diags: list[Diagnostic], code: str) -> list[Diagnostic]:
    return [d for d in diags if d.code == code]


def test_a_declared_model_and_a_built_in_provider_are_accepted(tmp_path: Path) -> None:
    text = LOCAL + HEAD + (
        "kind: Agent\nmetadata: {name: a}\nspec:\n  model:\n    primary: local/llama-3.1-8b\n"
        "    fallbacks: [anthropic/claude-sonnet-4, qwen2.5-coder-32b, OpenAI/gpt-5, local/qwen2.5-coder-32b@work]\n"
    )
    assert run(tmp_path, text) == []


def test_an_undeclared_model_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    diags = run(tmp_path, LOCAL + agent("local/llama-3.1-8"))
    [d] = of(diags, "model.unknown")
    assert d.severity is Severity.ERROR and d.path == "spec.model"
    assert d.message == "ModelProvider 'local' declares no model 'llama-3.1-8'"
    assert d.hint == "did you mean local/llama-3.1-8b?"
    assert d.location is not None and (d.location.line, d.location.column) == (15, 10)


def test_an_unknown_provider_is_an_error_suggesting_the_closest_one(tmp_path: Path) -> None:
    diags = run(tmp_path, LOCAL + agent("antropic/claude-sonnet-4"))
    [d] = of(diags, "model.unknown-provider")
    assert d.hint == "did you mean anthropic/claude-sonnet-4?"
    assert "OpenClaw 2026.9.6's built-in providers" in d.message
    [typo] = of(run(tmp_path, LOCAL + agent("locl/llama-3.1-8b")), "model.unknown-provider")
    assert typo.hint == "did you mean local/llama-3.1-8b?"


def test_a_bare_model_id_must_name_exactly_one_provider_model(tmp_path: Path) -> None:
    [unknown] = of(run(tmp_path, LOCAL + agent("llama-3.1-8")), "model.unknown")
    assert unknown.hint == "did you mean 'local/llama-3.1-8b'?"
    twice = LOCAL.replace("name: local", "name: other").replace("4000", "4001") + LOCAL
    [ambiguous] = of(run(tmp_path, twice + agent("llama-3.1-8b")), "model.ambiguous")
    assert ambiguous.hint == "name the provider, e.g. local/llama-3.1-8b"


def test_aliases_in_agent_defaults_count(tmp_path: Path) -> None:
    gateway = HEAD + (
        "kind: Gateway\nmetadata: {name: default}\nspec:\n  agents:\n    defaults:\n"
        "      models:\n        local/llama-3.1-8b: {alias: Llama}\n---\n"
    )
    assert run(tmp_path, LOCAL + gateway + agent("Llama")) == []
    assert run(tmp_path, LOCAL + gateway + agent("local/Llama")) == []


def test_aliases_in_raw_agent_defaults_count(tmp_path: Path) -> None:
    gateway = HEAD + (
        "kind: Gateway\nmetadata: {name: default}\nspec:\n  config:\n    agents:\n      defaults:\n"
        "        models:\n          local/llama-3.1-8b: {alias: Llama}\n---\n"
    )
    home = [("openclaw.config-has-home", "spec.config.agents")]
    assert [(d.code, d.path) for d in run(tmp_path, LOCAL + gateway + agent("Llama"))] == home
    assert [(d.code, d.path) for d in run(tmp_path, LOCAL + gateway + agent("local/Llama"))] == home


def test_gateway_default_model_is_checked_too(tmp_path: Path) -> None:
    text = HEAD + "kind: Gateway\nmetadata: {name: default}\nspec:\n  agents: {defaults: {model: nope/x}}\n"
    [d] = of(run(tmp_path, text), "model.unknown-provider")
    assert d.path == "spec.agents.defaults.model"


def test_replace_mode_leaves_only_declared_providers(tmp_path: Path) -> None:
    gateway = HEAD + "kind: Gateway\nmetadata: {name: default}\nspec:\n  models: {mode: replace}\n---\n"
    [d] = of(run(tmp_path, LOCAL + gateway + agent("anthropic/claude-sonnet-4")), "model.provider-not-declared")
    assert d.hint == "declare a ModelProvider named 'anthropic'"


def test_built_in_overlay_keeps_its_catalog_in_merge_mode(tmp_path: Path) -> None:
    overlay = HEAD + (
        "kind: ModelProvider\nmetadata: {name: anthropic}\nspec:\n  apiKey: {valueFrom: {env: K}}\n"
        "  models: [{id: claude-sonnet-4}]\n---\n"
    )
    assert run(tmp_path, overlay + agent("anthropic/claude-opus-4-6")) == []


def test_plugin_paths_turn_an_unknown_provider_into_a_warning(tmp_path: Path) -> None:
    gateway = HEAD + (
        "kind: Gateway\nmetadata: {name: default}\nspec:\n  config: {plugins: {load: {paths: [./p]}}}\n---\n"
    )
    [d] = of(run(tmp_path, gateway + agent("acme/m1")), "model.unknown-provider")
    assert d.severity is Severity.WARNING


def test_an_invalid_provider_is_still_declared_for_references(tmp_path: Path) -> None:
    broken = HEAD + "kind: ModelProvider\nmetadata: {name: local}\nspec:\n  baseUrl: ftp://x\n  models: []\n---\n"
    diags = run(tmp_path, broken + agent("local/anything"))
    assert [d.code for d in diags] == ["schema.invalid"]


def test_custom_providers_need_base_url_and_models_but_overlays_do_not(tmp_path: Path) -> None:
    text = HEAD + "kind: ModelProvider\nmetadata: {name: acme}\nspec: {api: openai-completions}\n---\n"
    text += HEAD + "kind: ModelProvider\nmetadata: {name: openrouter}\nspec: {apiKey: {valueFrom: {env: K}}}\n"
    diags = run(tmp_path, text)
    assert [d.code for d in diags] == ["provider.custom-needs-base-url", "provider.custom-needs-models"]
    assert all(d.resource == "ModelProvider/acme" for d in diags)


def test_provider_ids_are_lower_case_and_unique(tmp_path: Path) -> None:
    text = LOCAL + LOCAL.replace("name: local", "name: Local")
    diags = run(tmp_path, text)
    assert {d.code for d in diags} == {"provider.invalid-id", "provider.duplicate-id"}
    assert of(diags, "provider.invalid-id")[0].hint == "use 'local'"


def test_literal_credentials_warn_and_references_do_not(tmp_path: Path) -> None:
    text = HEAD + """kind: ModelProvider
metadata: {name: local}
spec:
  baseUrl: http://127.0.0.1:4000/v1
  apiKey: sk-not-a-reference
  headers: {X-Team: blue, X-Api-Key: literal-key, X-Ref: {valueFrom: {env: H}}}
  request:
    auth: {mode: authorization-bearer, token: tok-literal}
  models: [{id: m, headers: {X-Trace: on}}]
"""
    diags = run(tmp_path, text)
    assert [(d.code, d.path) for d in diags] == [
        ("secret.literal", "spec.apiKey"),
        ("secret.literal", "spec.headers.X-Api-Key"),
        ("secret.literal", "spec.request.auth.token"),
    ]
    assert "valueFrom" in diags[0].hint


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("request: {auth: {mode: header, value: x}}", 'request.auth mode "header" requires headerName and value'),
        ("request: {auth: {mode: provider-default, token: x}}", "takes no token"),
        ("request: {proxy: {mode: explicit-proxy}}", "requires url"),
        ("models: [{id: m}, {id: m}]", "model id 'm' is declared twice"),
        ("models: [{id: m, contextWindow: 0}]", "greater than 0"),
        ("baseUrl: localhost:4000", "Expected http:// or https:// URL"),
    ],
)
def test_provider_shapes_follow_openclaw(tmp_path: Path, spec: str, message: str) -> None:
    text = HEAD + f"kind: ModelProvider\nmetadata: {{name: openai}}\nspec:\n  {spec}\n"
    diags = run(tmp_path, text)
    assert any(message in d.message for d in diags), diags


GATEWAY = HEAD + "kind: Gateway\nmetadata: {name: default}\nspec:\n"


def test_typed_keys_are_refused_in_raw_config_with_a_hint(tmp_path: Path) -> None:
    text = GATEWAY + "  config:\n    session: {dmScope: per-peer}\n    models: {mode: replace}\n    gateway: {port: 1}\n"
    diags = run(tmp_path, text)
    assert [(d.code, d.path) for d in diags] == [
        ("gateway.config-typed-key", "spec.config.session"),
        ("gateway.config-typed-key", "spec.config.models"),
        ("openclaw.config-has-home", "spec.config.gateway"),
    ]
    assert diags[0].hint == "set it in the Gateway's spec.session"
    assert "ModelProvider" in diags[1].hint


@pytest.mark.parametrize(
    ("session", "message"),
    [
        ("{dmScope: per-user}", "invalid value 'per-user'"),
        ("{reset: {mode: daily, atHour: 24}}", "must be at most 23"),
        ("{reset: {idleMinutes: 0}}", "greater than 0"),
        ("{maintenance: {pruneAfter: 0}}", "duration must be positive"),
        ("{maintenance: {pruneAfter: 1x}}", "invalid duration"),
        ("{maintenance: {preserveRecent: true}}", "only false turns this off"),
        ("{maintenance: {maxDiskBytes: 10pb}}", "invalid size"),
        ("{sendPolicy: {rules: [{match: {channel: x}}]}}", "missing required field 'action'"),
        ("{sendPolicy: {rules: [{action: allow, match: {chatType: thread}}]}}", "'direct', 'group' or 'channel'"),
        ("{threadBindings: {idleHours: -1}}", "must be at least 0"),
    ],
)
def test_session_constraints_follow_openclaw(tmp_path: Path, session: str, message: str) -> None:
    diags = run(tmp_path, GATEWAY + f"  session: {session}\n")
    assert any(message in d.message for d in diags), diags


def test_main_key_is_accepted_with_a_warning(tmp_path: Path) -> None:
    diags = run(tmp_path, GATEWAY + "  session: {mainKey: x, dmScope: per-channel-peer}\n")
    assert [d.code for d in diags] == ["session.main-key-ignored"]


@pytest.mark.parametrize(
    ("text", "ms"),
    [("30d", 2_592_000_000), (30, 2_592_000_000), ("1h30m", 5_400_000), ("1.5h", 5_400_000), ("500ms", 500)],
)
def test_durations_parse_like_openclaw(text: str | int, ms: int) -> None:
    assert duration_ms(text, default_unit="d") == ms


@pytest.mark.parametrize("text", ["", "-1", "1x", "1h 30m", "h", "1e3"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        duration_ms(text, default_unit="d")


def test_byte_sizes_parse_like_openclaw() -> None:
    assert byte_size("500mb") == 500 * 1024**2
    assert byte_size(" 10GB ") == 10 * 1024**3
    assert byte_size(512) == 512
    assert byte_size("1.5k") == 1536
    with pytest.raises(ValueError):
        byte_size("10pb")
