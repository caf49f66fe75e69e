"""Validation reports every problem at its exact place, with a hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.validation import validate_paths

ROOT = Path(__file__).resolve().parents[3]
HEAD = "apiVersion: clawplane.dev/v1alpha1\n"


def run(tmp_path: Path, text: str, name: str = "r.yaml") -> list[Diagnostic]:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return validate_paths([tmp_path]).diagnostics.sorted()


def codes(diags: list[Diagnostic]) -> list[str]:
    return [d.code for d in diags]


def only(diags: list[Diagnostic], code: str) -> Diagnostic:
    hits = [d for d in diags if d.code == code]
    assert len(hits) == 1, diags
    return hits[0]


def test_quickstart_is_valid_without_warnings() -> None:
    result = validate_paths([ROOT / "examples" / "quickstart"])
    assert result.ok, result.diagnostics.sorted()
    assert not result.diagnostics.warnings
    kinds = sorted(r.resource.kind for r in result.resources)
    assert kinds == ["Agent", "Agent", "Channel", "Gateway", "McpServer", "McpServer", "ModelProvider", "Skill"]


def test_invalid_examples_report_every_main_diagnostic_with_positions() -> None:
    result = validate_paths([ROOT / "examples" / "invalid"])
    assert not result.ok
    found = set(codes(result.diagnostics.sorted()))
    expected = {
        "mcp.env-blocked", "secret.literal", "yaml.duplicate-key", "mcp.legacy-type", "mcp.legacy-disabled",
        "mcp.legacy-key", "mcp.name-collision", "mcp.reserved-name", "gateway.multiple", "secret.url-userinfo",
        "ref.unresolved", "schema.enum", "channel.open-without-wildcard", "yaml.syntax", "schema.unknown-field",
        "schema.invalid", "schema.unknown-kind",
    }  # fmt: skip
    assert expected <= found
    for d in result.diagnostics:
        assert d.location is not None and d.location.line >= 1 and d.location.column >= 1, d
        assert d.message


def test_unknown_field_points_at_the_key_and_suggests_the_right_one(tmp_path: Path) -> None:
    diags = run(
        tmp_path, HEAD + "kind: McpServer\nmetadata:\n  name: s\nspec:\n  command: x\n  enviroment: {}\n"
    )
    d = only(diags, "schema.unknown-field")
    assert (d.location.line, d.location.column) == (7, 3)  # type: ignore[union-attr]
    assert d.path == "spec.enviroment"
    assert "did you mean 'env'" in d.hint


def test_wrong_type_points_at_the_value(tmp_path: Path) -> None:
    diags = run(tmp_path, HEAD + "kind: McpServer\nmetadata:\n  name: s\nspec:\n  command: x\n  args: 5\n")
    d = only(diags, "schema.type")
    assert (d.location.line, d.location.column) == (7, 9)  # type: ignore[union-attr]
    assert "expected a list" in d.message


def test_missing_name_and_unknown_api_version_are_reported_together(tmp_path: Path) -> None:
    diags = run(tmp_path, "apiVersion: clawplane.dev/v2\nkind: Agent\nmetadata: {}\n")
    assert {"schema.api-version", "schema.missing-name"} <= set(codes(diags))


def test_all_problems_across_files_are_collected_at_once(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(HEAD + "kind: Agnt\nmetadata:\n  name: a\n")
    (tmp_path / "b.yaml").write_text("a: [unclosed\n")
    (tmp_path / "c.yaml").write_text(HEAD + "kind: Channel\nmetadata:\n  name: c\nspec:\n  type: nope\n")
    result = validate_paths([tmp_path])
    files = {Path(d.location.file).name for d in result.diagnostics if d.location}
    assert files == {"a.yaml", "b.yaml", "c.yaml"}


def test_legacy_type_is_a_warning_and_the_resource_is_accepted(tmp_path: Path) -> None:
    result_diags = run(
        tmp_path, HEAD + "kind: McpServer\nmetadata:\n  name: s\nspec:\n  type: sse\n  url: http://h/x\n"
    )
    d = only(result_diags, "mcp.legacy-type")
    assert d.severity is Severity.WARNING
    assert "transport: sse" in d.hint
    assert not [x for x in result_diags if x.is_error]


@pytest.mark.parametrize(
    "key,canonical",
    [
        ("connect_timeout", "connectionTimeoutMs"),
        ("connectTimeout", "connectionTimeoutMs"),
        ("timeout", "requestTimeoutMs"),
        ("workingDirectory", "cwd"),
        ("supports_parallel_tool_calls", "supportsParallelToolCalls"),
        ("ssl_verify", "sslVerify"),
        ("client_cert", "clientCert"),
        ("client_key", "clientKey"),
    ],
)
def test_legacy_keys_are_errors_naming_the_canonical_key(tmp_path: Path, key: str, canonical: str) -> None:
    diags = run(tmp_path, HEAD + f"kind: McpServer\nmetadata:\n  name: s\nspec:\n  command: x\n  {key}: 1\n")
    d = only(diags, "mcp.legacy-key")
    assert d.is_error and canonical in d.hint and d.location.line == 7  # type: ignore[union-attr]
    assert "schema.unknown-field" not in codes(diags)


def test_disabled_key_is_an_error_with_the_enabled_hint(tmp_path: Path) -> None:
    diags = run(
        tmp_path, HEAD + "kind: McpServer\nmetadata:\n  name: s\nspec:\n  command: x\n  disabled: true\n"
    )
    d = only(diags, "mcp.legacy-disabled")
    assert "enabled: false" in d.hint


def test_legacy_codex_key_is_an_error(tmp_path: Path) -> None:
    text = "kind: McpServer\nmetadata:\n  name: s\nspec:\n  command: x\n  codex:\n    default_tools_approval_mode: auto\n"
    d = only(run(tmp_path, HEAD + text), "mcp.legacy-key")
    assert "codex.defaultToolsApprovalMode" in d.hint


@pytest.mark.parametrize(
    "name", ["NODE_OPTIONS", " node_options ", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "BASH_FUNC_x%%"]
)
def test_blocked_env_names_are_errors(tmp_path: Path, name: str) -> None:
    text = f'kind: McpServer\nmetadata:\n  name: s\nspec:\n  command: x\n  env:\n    "{name}": v\n'
    d = only(run(tmp_path, HEAD + text), "mcp.env-blocked")
    assert d.is_error and d.location.line == 8  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["PATH", "HOME", "GITHUB_TOKEN", "NPM_CONFIG_REGISTRY", "GIT_CONFIG_COUNT"])
def test_allowed_env_names_pass(tmp_path: Path, name: str) -> None:
    text = f"kind: McpServer\nmetadata:\n  name: s\nspec:\n  command: x\n  env:\n    {name}:\n      valueFrom: {{env: X}}\n"
    assert "mcp.env-blocked" not in codes(run(tmp_path, HEAD + text))


def test_literal_secret_is_a_warning_and_references_are_not(tmp_path: Path) -> None:
    text = (
        "kind: McpServer\nmetadata:\n  name: s\nspec:\n  url: https://h/mcp\n  headers:\n"
        "    Authorization: Bearer abc\n    X-Trace: on\n    X-Api-Key:\n      valueFrom: {env: K}\n"
        "    api_token: $TOKEN\n"
    )
    diags = run(tmp_path, HEAD + text)
    d = only(diags, "secret.literal")
    assert d.severity is Severity.WARNING and d.path == "spec.headers.Authorization"
    assert "abc" not in d.message


def test_url_userinfo_is_a_warning_shown_redacted(tmp_path: Path) -> None:
    diags = run(
        tmp_path, HEAD + "kind: McpServer\nmetadata:\n  name: s\nspec:\n  url: https://u:pw123@h/mcp\n"
    )
    d = only(diags, "secret.url-userinfo")
    assert "pw123" not in d.message and "<redacted>" in d.message


def test_references_must_resolve_with_suggestions(tmp_path: Path) -> None:
    text = (
        HEAD
        + "kind: McpServer\nmetadata:\n  name: github\nspec:\n  command: x\n  codex:\n    agents: [codr]\n"
        "---\n" + HEAD + "kind: Agent\nmetadata:\n  name: coder\nspec:\n  mcpServers: [githb]\n"
        "---\n" + HEAD + "kind: Channel\nmetadata:\n  name: c\nspec:\n  type: slack\n  agent: ghost\n"
    )
    refs = [d for d in run(tmp_path, text) if d.code == "ref.unresolved"]
    assert [(d.path, d.location.line) for d in refs] == [  # type: ignore[union-attr]
        ("spec.codex.agents[0]", 8),
        ("spec.mcpServers[0]", 15),
        ("spec.agent", 23),
    ]
    assert "did you mean 'coder'" in refs[0].hint
    assert "did you mean 'github'" in refs[1].hint


def test_reference_to_an_invalid_resource_is_not_reported_twice(tmp_path: Path) -> None:
    text = (
        HEAD + "kind: McpServer\nmetadata:\n  name: s\nspec:\n  command: x\n  bad: 1\n"
        "---\n" + HEAD + "kind: Agent\nmetadata:\n  name: a\nspec:\n  mcpServers: [s]\n"
    )
    assert codes(run(tmp_path, text)) == ["schema.unknown-field"]


def test_duplicate_names_per_kind_are_errors_but_other_kinds_may_share(tmp_path: Path) -> None:
    text = (
        HEAD + "kind: Agent\nmetadata:\n  name: x\n---\n" + HEAD + "kind: Agent\nmetadata:\n  name: x\n"
        "---\n" + HEAD + "kind: Skill\nmetadata:\n  name: x\nspec:\n  description: d\n"
    )
    d = only(run(tmp_path, text), "resource.duplicate")
    assert d.location.line == 9  # type: ignore[union-attr]


def test_more_than_one_gateway_is_an_error(tmp_path: Path) -> None:
    text = (
        HEAD + "kind: Gateway\nmetadata:\n  name: a\n---\n" + HEAD + "kind: Gateway\nmetadata:\n  name: b\n"
    )
    assert codes(run(tmp_path, text)) == ["gateway.multiple"]


def test_servers_sanitizing_to_the_same_name_warn_with_final_names(tmp_path: Path) -> None:
    text = (
        HEAD + "kind: McpServer\nmetadata:\n  name: my.srv\nspec:\n  command: x\n"
        "---\n" + HEAD + "kind: McpServer\nmetadata:\n  name: my-srv\nspec:\n  command: y\n"
    )
    d = only(run(tmp_path, text), "mcp.name-collision")
    assert "'my-srv-2'" in d.message and d.severity is Severity.WARNING


def test_reserved_server_name_is_an_error(tmp_path: Path) -> None:
    d = only(
        run(tmp_path, HEAD + "kind: McpServer\nmetadata:\n  name: __proto__\nspec:\n  command: x\n"),
        "mcp.reserved-name",
    )
    assert d.is_error


def test_the_agent_endpoints_path_is_no_server_name(tmp_path: Path) -> None:
    d = only(
        run(tmp_path, HEAD + "kind: McpServer\nmetadata:\n  name: agents\nspec:\n  command: x\n"),
        "mcp.reserved-name",
    )
    assert d.is_error and "/mcp/agents/<agent>" in d.message


def test_dm_policy_warnings_match_openclaw(tmp_path: Path) -> None:
    text = (
        HEAD + "kind: Channel\nmetadata:\n  name: a\nspec:\n  type: slack\n  dmPolicy: open\n"
        "---\n"
        + HEAD
        + "kind: Channel\nmetadata:\n  name: b\nspec:\n  type: discord\n  dmPolicy: allowlist\n"
        "---\n"
        + HEAD
        + 'kind: Channel\nmetadata:\n  name: c\nspec:\n  type: irc\n  dmPolicy: open\n  allowFrom: ["*"]\n'
    )
    diags = run(tmp_path, text)
    assert codes(diags) == ["channel.open-without-wildcard", "channel.empty-allowlist"]
    assert all("all DMs will be dropped" in d.message for d in diags)


def test_agent_ids_follow_openclaw_pattern_and_are_case_insensitive(tmp_path: Path) -> None:
    text = (
        HEAD
        + "kind: Agent\nmetadata:\n  name: Coder\n---\n"
        + HEAD
        + "kind: Agent\nmetadata:\n  name: coder\n"
        "---\n" + HEAD + "kind: Agent\nmetadata:\n  name: _under\n"
    )
    assert sorted(codes(run(tmp_path, text))) == ["agent.id-collision", "agent.invalid-id"]


def test_kind_list_items_are_validated_with_their_own_positions(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "  - apiVersion: clawplane.dev/v1alpha1\n    kind: Agent\n    metadata:\n      name: a\n"
        "  - apiVersion: clawplane.dev/v1alpha1\n    kind: Agent\n    metadata:\n      name: b\n    spec:\n      skils: []\n"
    )
    (tmp_path / "l.yaml").write_text(text)
    result = validate_paths([tmp_path])
    assert [r.resource.name for r in result.resources] == ["a"]
    d = only(result.diagnostics.sorted(), "schema.unknown-field")
    assert (d.location.line, d.location.column) == (13, 7)  # type: ignore[union-attr]
    assert "did you mean 'skills'" in d.hint


def test_skill_folders_inside_the_resource_folder_are_not_read_as_resources(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "s"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\n")
    (skill / "config.yaml").write_text("not: a resource\n")
    (tmp_path / "a.yaml").write_text(HEAD + "kind: Agent\nmetadata:\n  name: a\n")
    assert validate_paths([tmp_path]).ok


def test_resources_with_schema_errors_still_get_their_cross_checks() -> None:
    # references.yaml mixes enum errors with dangling references: all show in one run, as doctor finds them.
    result = validate_paths([ROOT / "examples" / "invalid" / "references.yaml"])
    dangling = sorted(
        (d.location.line, d.message) for d in result.diagnostics if d.code == "ref.unresolved" and d.location
    )
    assert dangling == [
        (6, "McpServer 'notes' is not declared"),
        (15, "Agent 'helpr' is not declared"),  # in McpServer/githib, whose codex mode is invalid
        (24, "Agent 'nobody' is not declared"),  # in Channel/chat, whose type is invalid
        (34, "Agent 'ghost' is not declared"),
    ]
    helpr = next(d for d in result.diagnostics if "helpr" in d.message)
    assert helpr.hint == "did you mean 'helper'?" and helpr.resource == "McpServer/githib"
    url = next(d for d in result.diagnostics if d.code == "secret.url-userinfo")
    assert "hunter2" not in url.message and url.resource == "McpServer/githib"
    assert {"schema.enum"} <= {d.code for d in result.diagnostics}


def test_codex_agents_naming_an_agent_that_does_not_use_the_server_is_a_warning(tmp_path: Path) -> None:
    diags = run(
        tmp_path,
        HEAD + "kind: McpServer\nmetadata:\n  name: s\nspec:\n  command: x\n  codex:\n    agents: [coder, all]\n"
        "---\n" + HEAD + "kind: Agent\nmetadata:\n  name: coder\nspec:\n  mcpServers: []\n"
        "---\n" + HEAD + "kind: Agent\nmetadata:\n  name: all\nspec: {}\n",
    )
    d = only(diags, "codex.agent-without-server")
    assert d.severity.value == "warning" and d.path == "spec.codex.agents[0]"
    assert "Agent 'coder' does not use MCP server 's'" in d.message and "mcpServers" in d.hint
