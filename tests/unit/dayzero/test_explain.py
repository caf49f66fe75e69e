"""``clawplane explain``: fields read from the generated JSON Schema."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from clawplane.cli.app import app
from clawplane.models import KINDS
from clawplane.schema.explain import ExplainError, explain, render_text, resolve_kind

runner = CliRunner()


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("mcpserver", "McpServer"),
        ("MCPSERVER", "McpServer"),
        ("mcps", "McpServer"),
        ("agents", "Agent"),
        ("Channel", "Channel"),
        ("skill", "Skill"),
        ("gateway", "Gateway"),
    ],
)
def test_kind_names_are_case_insensitive(name: str, kind: str) -> None:
    assert resolve_kind(name) == kind


def test_unknown_kind_suggests() -> None:
    with pytest.raises(ExplainError) as exc:
        resolve_kind("mcpservr")
    assert exc.value.suggestions == ["McpServer"]


def test_enum_field_has_allowed_values_and_default() -> None:
    info = explain("mcpserver.spec.transport")
    assert info.kind == "McpServer" and info.path == "spec.transport"
    assert info.allowed == ["stdio", "sse", "streamable-http"]
    assert info.has_default and info.default is None
    assert "inferred" in info.description
    hosting = explain("McpServer.spec.hosting")
    assert hosting.default == "clawplane" and hosting.allowed == ["clawplane", "consumer"]


def test_integer_field_with_constraints() -> None:
    info = explain("mcpserver.spec.connectionTimeoutMs")
    assert info.type == "integer" and info.default == 30000
    assert info.constraints["exclusiveMinimum"] == 0


def test_snake_case_path_segments_resolve_to_camel_case() -> None:
    assert explain("agent.spec.mcp_servers").path == "spec.mcpServers"
    assert explain("agent.spec.mcp_servers").type == "array of string"


def test_object_lists_sub_fields() -> None:
    info = explain("mcpserver.spec")
    names = [f.name for f in info.fields]
    assert names[:3] == ["enabled", "transport", "type"]
    assert "toolFilter" in names and "connectionTimeoutMs" in names
    assert any(f.name == "spec" and f.required for f in explain("mcpserver").fields)


def test_map_values_and_arrays_are_traversed() -> None:
    assert explain("channel.spec.groups.anygroup.requireMention").type == "boolean"
    assert explain("mcpserver.spec.toolFilter.include").type == "array of string"


def test_unknown_field_suggests() -> None:
    with pytest.raises(ExplainError) as exc:
        explain("mcpserver.spec.transprt")
    assert "transport" in exc.value.suggestions


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_renders(kind: str) -> None:
    text = render_text(explain(kind))
    assert text.startswith(f"KIND:     {kind}") and "FIELDS:" in text


def test_cli_text_json_and_errors() -> None:
    res = runner.invoke(app, ["explain", "mcpserver.spec.transport"])
    assert res.exit_code == 0 and "ALLOWED:" in res.output and "streamable-http" in res.output
    res = runner.invoke(app, ["explain", "MCPSERVER.spec.hosting", "--json"])
    assert res.exit_code == 0
    doc = json.loads(res.output)
    assert doc["default"] == "clawplane" and doc["allowed"] == ["clawplane", "consumer"]
    res = runner.invoke(app, ["explain", "agnt"])
    assert res.exit_code == 1 and "did you mean: Agent?" in res.output


def test_model_providers_and_session_policy_are_explained() -> None:
    assert resolve_kind("mp") == "ModelProvider" and resolve_kind("modelproviders") == "ModelProvider"
    window = explain("modelprovider.spec.models.contextWindow")
    assert window.type == "number" and window.constraints["exclusiveMinimum"] == 0
    assert "context window" in window.description
    api = explain("mp.spec.api")
    assert "openai-completions" in api.allowed and "anthropic-messages" in api.allowed
    assert explain("mp.spec.connectionTimeoutMs").default == 10000
    names = [f.name for f in explain("modelprovider.spec").fields]
    assert {"baseUrl", "apiKey", "headers", "models", "request", "probe"} <= set(names)
    dm = explain("gateway.spec.session.dmScope")
    assert dm.default == "main" and dm.allowed == ["main", "per-peer", "per-channel-peer", "per-account-channel-peer"]
    assert explain("gateway.spec.models.mode").allowed == ["merge", "replace"]
    assert explain("gateway.spec.session.resetByChannel.discord.atHour").constraints["maximum"] == 23


def test_openclaw_keys_are_explained_with_openclaws_words() -> None:
    from clawplane.schema.openclaw import describe, node_at

    auth = explain("gateway", "spec.gateway.auth")
    assert (auth.path, auth.type) == ("spec.gateway.auth", "object")
    assert (auth.title, auth.description) == describe(node_at(("gateway", "auth")) or {})
    names = {f.name: f for f in auth.fields}
    assert {"mode", "token", "password", "trustedProxy"} <= set(names)
    assert names["mode"].type == "string (enum) | valueFrom"
    assert names["mode"].description.startswith("Gateway auth mode")
    token = explain("gateway.spec.gateway.auth.token")
    assert token.type == "string | object | valueFrom" and token.title == "Gateway Token"
    sandbox = explain("agent", "spec.sandbox")
    assert "agents.entries.<id>.sandbox" in sandbox.description
    assert {"mode", "docker", "workspaceAccess"} <= {f.name for f in sandbox.fields}
    mode = explain("agent", "spec.sandbox.mode")
    assert mode.allowed == ["off", "non-main", "all"] and mode.type == "string (enum) | valueFrom"


def test_channel_keys_of_some_types_say_which() -> None:
    homeserver = explain("channel", "spec.homeserver")
    assert homeserver.only_for_types == ["matrix"] and homeserver.type == "string | valueFrom"
    assert "ONLY FOR: type matrix" in render_text(homeserver)
    dm = explain("channel.spec.dm")
    assert "matrix" in dm.only_for_types and "policy" in {f.name for f in dm.fields}
    assert explain("channel.spec.dmPolicy").only_for_types == []
    assert explain("channel.spec.groups.anygroup.autoReply").type == "boolean"
    assert explain("channel.spec.groups.anygroup.requireMention").description == "Only answer when mentioned."


def test_cli_takes_the_path_as_a_second_argument() -> None:
    res = runner.invoke(app, ["explain", "agent", "spec.sandbox"])
    assert res.exit_code == 0, res.output
    assert "FIELD:    spec.sandbox <object>" in res.output and "docker" in res.output
    res = runner.invoke(app, ["explain", "gateway", "spec.gateway.auth", "--json"])
    doc = json.loads(res.output)
    assert doc["title"] == "Gateway Auth" and doc["path"] == "spec.gateway.auth"
    res = runner.invoke(app, ["explain", "agent", "spec.sandbx"])
    assert res.exit_code == 1 and "did you mean: sandbox?" in res.output
