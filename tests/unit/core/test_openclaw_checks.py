"""Every key OpenClaw takes can be declared by its name, and everything bound for openclaw.json is
checked against OpenClaw 2026.9.6's own schema at ``validate`` time, at the line that holds the mistake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Agent, Channel, Gateway, McpServer
from clawplane.render import render_openclaw_config
from clawplane.validation import validate_texts

HEAD = "apiVersion: clawplane.dev/v1alpha1\n"


def run(text: str) -> list[Diagnostic]:
    return validate_texts([("r.yaml", text)]).diagnostics.sorted()


def errors(text: str) -> list[tuple[str, str, int, int]]:
    return [
        (d.code, d.path, d.location.line if d.location else 0, d.location.column if d.location else 0)
        for d in run(text)
        if d.severity is Severity.ERROR
    ]


def resources(text: str) -> list[Any]:
    result = validate_texts([("r.yaml", text)])
    assert result.ok, result.diagnostics.sorted()
    return [item.resource for item in result.resources]


def render(text: str) -> dict[str, Any]:
    found = resources(text)
    config, _ = render_openclaw_config(
        gateway=next((r for r in found if isinstance(r, Gateway)), None),
        servers=[r for r in found if isinstance(r, McpServer)],
        agents=[r for r in found if isinstance(r, Agent)],
        channels=[r for r in found if isinstance(r, Channel)],
        hosted_urls={},
        base_dirs={},
        environ={},
    )
    return config


AGENT = HEAD + "kind: Agent\nmetadata: {name: main}\nspec:\n"
GATEWAY = HEAD + "kind: Gateway\nmetadata: {name: default}\nspec:\n"


def test_an_agent_declares_openclaw_keys_by_name_and_they_reach_openclaw_json() -> None:
    text = AGENT + (
        "  identity: {name: Ada, emoji: '🦊'}\n"
        "  sandbox: {mode: all, workspaceAccess: ro}\n"
        "  heartbeat: {every: 30m}\n"
        "  tools: {profile: coding, exec: {host: sandbox}}\n"
        "  model: {primary: openai/gpt-5, fallbacks: [anthropic/claude-sonnet-4]}\n"
    )
    entry = render(text)["agents"]["entries"]["main"]
    assert entry["identity"] == {"name": "Ada", "emoji": "🦊"}
    assert entry["sandbox"] == {"mode": "all", "workspaceAccess": "ro"}
    assert entry["heartbeat"] == {"every": "30m"}
    assert entry["tools"] == {"profile": "coding", "exec": {"host": "sandbox"}}


def test_a_wrong_openclaw_value_is_an_error_at_its_line_with_the_allowed_values() -> None:
    text = AGENT + "  sandbox:\n    mode: everything\n"
    [d] = [d for d in run(text) if d.is_error]
    assert (d.code, d.path) == ("openclaw.enum", "spec.sandbox.mode")
    assert (d.location.line, d.location.column) == (6, 11)  # type: ignore[union-attr]
    assert "agents.entries.main.sandbox.mode" in d.message
    assert "'off', 'non-main', 'all'" in d.hint


def test_an_unknown_key_points_at_the_key_with_a_did_you_mean_over_both_vocabularies() -> None:
    [sandbox] = errors(AGENT + "  sandbx: {mode: all}\n")
    assert sandbox == ("schema.unknown-field", "spec.sandbx", 5, 3)
    [d] = [d for d in run(AGENT + "  mcpServer: [a]\n") if d.is_error]
    assert d.hint == "did you mean 'mcpServers'?"
    [d] = [d for d in run(AGENT + "  sandbox: {mdoe: all}\n") if d.is_error]
    assert (d.path, d.hint) == ("spec.sandbox.mdoe", "did you mean 'mode'?")


def test_the_gateway_declares_every_top_level_section_by_name() -> None:
    text = GATEWAY + (
        "  gateway:\n"
        "    port: 18789\n"
        "    bind: loopback\n"
        "    auth: {mode: token, token: {valueFrom: {env: GATEWAY_TOKEN}}}\n"
        "  logging: {level: debug}\n"
        "  hooks: {enabled: true, token: {valueFrom: {env: HOOKS_TOKEN}}}\n"
        "  diagnostics: {enabled: true}\n"
        "  plugins: {entries: {web-readability: {enabled: true}}}\n"
        "  approvals: {exec: {enabled: true}, rules: [{kinds: [McpServer]}]}\n"
    )
    config = render(text)
    # A SecretInput field takes a SecretRef; a plain string field gets ${NAME}.
    assert config["gateway"]["auth"]["token"] == {"source": "env", "provider": "default", "id": "GATEWAY_TOKEN"}
    assert config["gateway"]["port"] == 18789
    assert config["logging"] == {"level": "debug"}
    assert config["plugins"]["entries"]["web-readability"] == {"enabled": True}
    # clawplane's own plan-approval rules stay clawplane's.
    assert config["approvals"] == {"exec": {"enabled": True}}


def test_a_typo_in_a_gateway_section_and_a_wrong_type_are_errors() -> None:
    found = errors(GATEWAY + "  gatwya: {port: 1}\n  hooks: {enabled: 'yes'}\n")
    assert [(code, path) for code, path, *_ in found] == [
        ("schema.unknown-field", "spec.gatwya"),
        ("openclaw.type", "spec.hooks.enabled"),
    ]


def test_spec_config_is_checked_too_and_names_the_typed_home() -> None:
    text = GATEWAY + (
        "  config:\n"
        "    gatwya: {port: 1}\n"
        "    gateway:\n"
        "      auth:\n"
        "        token: {valueFrom: {env: GATEWAY_TOKEN}}\n"
        "    channels: {feishu: {topicSessionMode: bogus}}\n"
    )
    found = {d.path: d for d in run(text)}
    assert found["spec.config.gatwya"].code == "openclaw.unknown-key"
    assert "did you mean 'gateway'?" in found["spec.config.gatwya"].hint
    token = found["spec.config.gateway.auth.token"]
    assert token.code == "openclaw.type" and "valueFrom means nothing" in token.hint
    assert found["spec.config.channels.feishu.topicSessionMode"].code == "openclaw.enum"
    assert found["spec.config.gateway"].severity is Severity.INFO


def test_config_unchecked_lets_a_newer_openclaws_keys_through() -> None:
    text = GATEWAY + "  config:\n    gateway: {futureThing: 1}\n  configUnchecked: [gateway.futureThing]\n"
    assert errors(text) == []
    stale = GATEWAY + "  configUnchecked: [gateway.futureThing]\n"
    assert [d.code for d in run(stale)] == ["openclaw.unchecked-unused"]


def test_substituted_strings_in_spec_config_are_left_to_openclaw() -> None:
    # OpenClaw substitutes ${VAR} before it validates: an enum may be one.
    assert errors(GATEWAY + "  config:\n    gateway: {mode: '${GATEWAY_MODE}'}\n") == []


def test_a_reference_where_openclaw_takes_no_string_is_refused() -> None:
    found = errors(GATEWAY + "  gateway: {port: {valueFrom: {env: PORT}}}\n")
    assert [(c, p) for c, p, *_ in found] == [("openclaw.value-from", "spec.gateway.port")]


@pytest.mark.parametrize(
    ("section", "kind"),
    [
        ("mcp: {servers: {x: {command: a}}}", "McpServer"),
        ("agents: {entries: {main: {}}}", "Agent"),
        ("channels: {telegram: {enabled: true}}", "Channel"),
    ],
)
def test_the_gateway_leaves_other_kinds_their_entries(section: str, kind: str) -> None:
    [d] = [d for d in run(GATEWAY + f"  {section}\n") if d.is_error]
    assert d.code == "gateway.section-of-another-kind" and kind in d.message


def test_channels_defaults_belong_to_the_gateway() -> None:
    config = render(GATEWAY + "  channels: {defaults: {groupPolicy: open}}\n" + "---\n" + HEAD
                    + "kind: Channel\nmetadata: {name: t}\nspec: {type: telegram}\n")
    assert config["channels"]["defaults"] == {"groupPolicy": "open"}
    assert config["channels"]["telegram"]["dmPolicy"] == "pairing"


CHANNEL = HEAD + "kind: Channel\nmetadata: {name: c}\nspec:\n"


def test_a_matrix_channel_takes_its_connection_settings_and_keeps_its_dm_policy_in_dm() -> None:
    text = CHANNEL + (
        "  type: matrix\n"
        "  homeserver: https://matrix.example.org\n"
        "  dmPolicy: allowlist\n"
        "  allowFrom: ['@ada:example.org']\n"
        "  accessToken: {valueFrom: {env: MATRIX_TOKEN}}\n"
    )
    block = render(text)["channels"]["matrix"]
    assert block["homeserver"] == "https://matrix.example.org"
    assert block["dm"] == {"policy": "allowlist", "allowFrom": ["@ada:example.org"]}
    assert "dmPolicy" not in block and "allowFrom" not in block
    assert block["accessToken"] == {"source": "env", "provider": "default", "id": "MATRIX_TOKEN"}


def test_channel_settings_that_are_not_secrets_are_declarable() -> None:
    text = CHANNEL + "  type: slack\n  mode: socket\n  credentials: {botToken: {valueFrom: {env: SLACK_BOT}}}\n"
    block = render(text)["channels"]["slack"]
    assert block["mode"] == "socket"
    assert block["botToken"] == {"source": "env", "provider": "default", "id": "SLACK_BOT"}


def test_discord_has_guilds_not_groups() -> None:
    [d] = [d for d in run(CHANNEL + "  type: discord\n  groups: {'*': {requireMention: true}}\n") if d.is_error]
    assert (d.code, d.path) == ("schema.unknown-field", "spec.groups")
    assert render(CHANNEL + "  type: discord\n  guilds: {'123': {requireMention: true}}\n")["channels"][
        "discord"
    ]["guilds"] == {"123": {"requireMention": True}}


SERVER = HEAD + "kind: McpServer\nmetadata: {name: gh}\nspec:\n"


def test_a_remote_server_behind_oauth_is_declarable() -> None:
    text = SERVER + (
        "  url: https://api.example.com/mcp\n  transport: streamable-http\n  auth: oauth\n"
        "  oauth: {identity: per-requester, scope: 'repo read:org'}\n"
    )
    entry = render(text)["mcp"]["servers"]["gh"]
    assert entry["auth"] == "oauth"
    assert entry["oauth"] == {"identity": "per-requester", "scope": "repo read:org"}


def test_per_requester_oauth_follows_openclaws_rules() -> None:
    text = SERVER + "  command: node\n  auth: oauth\n  oauth: {identity: per-requester}\n"
    assert [c for c, *_ in errors(text)] == ["schema.invalid"]


def test_codex_writes_is_mapped_for_openclaw_with_a_warning() -> None:
    text = SERVER + "  url: https://api.example.com/mcp\n  codex: {defaultToolsApprovalMode: writes}\n"
    [d] = run(text)
    assert (d.severity, d.code) == (Severity.WARNING, "openclaw.approval-mode-mapped")
    assert render(text)["mcp"]["servers"]["gh"]["codex"] == {"defaultToolsApprovalMode": "prompt"}


def test_agents_defaults_model_takes_primary_and_fallbacks() -> None:
    text = GATEWAY + "  agents:\n    defaults:\n      model: {primary: openai/gpt-5, fallbacks: [openai/gpt-5-mini]}\n"
    defaults = render(text)["agents"]["defaults"]
    assert defaults["model"] == {"primary": "openai/gpt-5", "fallbacks": ["openai/gpt-5-mini"]}


def test_a_literal_in_a_secret_input_warns_and_is_redacted_from_plans(tmp_path: Path) -> None:
    from clawplane.desired.compiler import _redacted_spec

    text = CHANNEL + "  type: telegram\n  botToken: '123:abc'\n"
    [d] = run(text)
    assert (d.code, d.path) == ("secret.literal", "spec.botToken")
    [channel] = resources(text)
    assert _redacted_spec(channel)["botToken"] == "<redacted>"


def test_references_in_openclaw_keys_count_as_secrets() -> None:
    from clawplane.desired.state import secret_fields
    from clawplane.models.values import ValueFrom

    [gateway] = resources(GATEWAY + "  gateway: {auth: {token: {valueFrom: {env: GATEWAY_TOKEN}}}}\n")
    found = {path: value for path, _, value in secret_fields(gateway)}
    assert isinstance(found[("gateway", "auth", "token")], ValueFrom)
