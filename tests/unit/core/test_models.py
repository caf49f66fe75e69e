"""The resource models enforce OpenClaw's constraints and defaults."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from clawplane.models import CHANNEL_TYPES, Agent, Channel, Gateway, McpServer, Skill
from clawplane.models.mcpserver import Transport
from clawplane.models.values import ValueFrom

API = "clawplane.dev/v1alpha1"


def server(**spec: Any) -> McpServer:
    return McpServer.model_validate(
        {"apiVersion": API, "kind": "McpServer", "metadata": {"name": "s"}, "spec": spec}
    )


def channel(**spec: Any) -> Channel:
    return Channel.model_validate(
        {"apiVersion": API, "kind": "Channel", "metadata": {"name": "c"}, "spec": spec}
    )


def test_server_timeouts_default_to_openclaw_values() -> None:
    spec = server(command="node").spec
    assert (spec.connection_timeout_ms, spec.request_timeout_ms) == (30000, 60000)
    assert spec.supports_parallel_tool_calls is False
    assert spec.enabled is True


@pytest.mark.parametrize("field", ["connectionTimeoutMs", "requestTimeoutMs"])
@pytest.mark.parametrize("value", [0, -1])
def test_server_timeouts_must_be_positive(field: str, value: int) -> None:
    with pytest.raises(ValidationError):
        server(command="node", **{field: value})


def test_stdio_transport_needs_a_non_empty_command() -> None:
    with pytest.raises(ValidationError, match="requires a non-empty command"):
        server(transport="stdio", command="   ")


@pytest.mark.parametrize("url", ["ftp://x/mcp", "file:///tmp/x", "not a url", "ws://h/mcp"])
def test_url_must_be_http_or_https(url: str) -> None:
    with pytest.raises(ValidationError, match="Expected http:// or https:// URL"):
        server(url=url)


def test_transport_is_inferred_like_openclaw() -> None:
    assert server(command="node").spec.effective_transport is Transport.STDIO
    assert server(url="http://h/mcp").spec.effective_transport is Transport.SSE
    assert server(url="http://h/mcp", type="http").spec.effective_transport is Transport.STREAMABLE_HTTP


def test_http_transport_alias_is_not_a_transport_value() -> None:
    with pytest.raises(ValidationError):
        server(url="http://h/mcp", transport="http")


def test_tool_filter_lists_are_non_empty_and_trimmed() -> None:
    spec = server(command="x", toolFilter={"include": ["  read_*  "]}).spec
    assert spec.tool_filter is not None and spec.tool_filter.include == ["read_*"]
    with pytest.raises(ValidationError):
        server(command="x", toolFilter={"include": []})
    with pytest.raises(ValidationError):
        server(command="x", toolFilter={"exclude": ["  "]})


def test_codex_agents_must_be_non_empty_valid_ids() -> None:
    assert server(command="x", codex={"agents": [" coder "]}).spec.codex.agents == ["coder"]  # type: ignore[union-attr]
    for bad in ([], ["-bad"], ["has space"], ["x" * 65]):
        with pytest.raises(ValidationError):
            server(command="x", codex={"agents": bad})


@pytest.mark.parametrize("mode", ["auto", "prompt", "approve"])
def test_codex_approval_modes(mode: str) -> None:
    assert server(command="x", codex={"defaultToolsApprovalMode": mode}).spec.codex is not None


def test_unknown_approval_mode_is_rejected() -> None:
    with pytest.raises(ValidationError):
        server(command="x", codex={"defaultToolsApprovalMode": "never"})


def test_secret_values_accept_literals_and_exactly_one_reference() -> None:
    spec = server(command="x", env={"A": "1", "B": 2, "C": True, "D": {"valueFrom": {"env": "TOKEN"}}}).spec
    assert isinstance(spec.env["D"], ValueFrom)
    assert spec.env["B"] == 2
    with pytest.raises(ValidationError, match="exactly one"):
        server(command="x", env={"D": {"valueFrom": {"env": "A", "file": "b"}}})
    with pytest.raises(ValidationError):
        server(command="x", env={"D": {"valueFrom": {}}})
    with pytest.raises(ValidationError):
        server(command="x", env={"D": ["list"]})


def test_unknown_fields_are_rejected_everywhere() -> None:
    # A part that stands for an OpenClaw object keeps other keys for validation to check against
    # OpenClaw's schema (tests/unit/core/test_openclaw_checks.py); a closed part refuses them itself.
    assert server(command="x", bogus=1).spec.openclaw_keys == {"bogus": 1}
    with pytest.raises(ValidationError):
        server(command="x", toolFilter={"include": ["a"], "other": ["b"]})


def test_channel_defaults_match_openclaw() -> None:
    spec = channel(type="telegram").spec
    assert spec.dm_policy.value == "pairing"
    assert spec.group_policy.value == "allowlist"
    assert spec.enabled is True


def test_channel_accepts_all_27_openclaw_ids() -> None:
    assert len(CHANNEL_TYPES) == 27
    for ch in CHANNEL_TYPES:
        assert channel(type=ch).spec.type == ch


@pytest.mark.parametrize(
    "field,value", [("type", "telegramm"), ("dmPolicy", "everyone"), ("groupPolicy", "everyone")]
)
def test_channel_rejects_unknown_enum_values(field: str, value: str) -> None:
    spec: dict[str, Any] = {"type": "slack", field: value}
    with pytest.raises(ValidationError):
        channel(**spec)


def test_allowall_is_feishus_alone() -> None:
    # The model takes every group policy any channel has; OpenClaw's schema of each channel decides.
    from clawplane.validation import validate_texts

    def errors(kind: str) -> list[str]:
        text = f"apiVersion: clawplane.dev/v1alpha1\nkind: Channel\nmetadata: {{name: c}}\nspec: {{type: {kind}, groupPolicy: allowall}}\n"
        return [d.code for d in validate_texts([("c.yaml", text)]).diagnostics if d.is_error]

    assert errors("feishu") == []
    assert errors("slack") == ["openclaw.enum"]


def test_agent_skills_absent_empty_and_list_are_distinct() -> None:
    def agent(spec: dict[str, Any]) -> Agent:
        return Agent.model_validate(
            {"apiVersion": API, "kind": "Agent", "metadata": {"name": "a"}, "spec": spec}
        )

    assert agent({}).spec.skills is None
    assert agent({"skills": []}).spec.skills == []
    assert agent({"skills": [" x "]}).spec.skills == ["x"]


def test_gateway_and_skill_have_useful_defaults() -> None:
    gw = Gateway.model_validate({"apiVersion": API, "kind": "Gateway", "metadata": {"name": "default"}})
    assert gw.spec.skills.limits.max_skills_in_prompt == 150
    assert gw.spec.skills.limits.max_skills_prompt_chars == 18000
    assert gw.spec.skills.limits.max_skill_file_bytes == 256000
    sk = Skill.model_validate(
        {"apiVersion": API, "kind": "Skill", "metadata": {"name": "k"}, "spec": {"description": "d"}}
    )
    assert sk.spec.user_invocable is True and sk.spec.disable_model_invocation is False


def test_api_version_is_fixed() -> None:
    with pytest.raises(ValidationError):
        McpServer.model_validate(
            {"apiVersion": "v1", "kind": "McpServer", "metadata": {"name": "s"}, "spec": {"command": "x"}}
        )
