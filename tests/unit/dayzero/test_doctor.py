"""``clawplane doctor``: findings and byte-preserving fixes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from clawplane.cli.app import app
from clawplane.editing.doctor import doctor_paths

runner = CliRunner()

ODD = """\
%YAML 1.2
---
# top comment, kept

apiVersion: clawplane.dev/v1alpha1   # trailing
kind: McpServer
metadata:
  name: notes   # the notes server
  labels: { team:   "a" ,  tier: 'b' }
spec:
    type: "http"      # legacy!
    url:   https://x.example.com/mcp
    disabled: false
    connect_timeout: 10   # seconds
    timeout: 2.5
    workingDirectory: .
    args:
    -   "--weird"
    -   'indent'
    codex: {agents: [codr], default_tools_approval_mode: 'auto'}
    headers:
      Authorization: Bearer abc123

---   # second doc
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {name: coder}
spec:
  mcpServers:
    - "notse"   # typo
    - zzz
...
"""

FIXED = (
    ODD.replace('type: "http"  ', 'transport: "streamable-http"  ')
    .replace("disabled: false", "enabled: true")
    .replace("connect_timeout: 10", "connectionTimeoutMs: 10000")
    .replace("timeout: 2.5", "requestTimeoutMs: 2500")
    .replace("workingDirectory: .", "cwd: .")
    .replace("[codr], default_tools_approval_mode:", "[coder], defaultToolsApprovalMode:")
    .replace('- "notse"', '- "notes"')
)


def write(tmp_path: Path, text: str, name: str = "res.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def codes(tmp_path: Path) -> list[str]:
    return sorted(f.code for f in doctor_paths([tmp_path]).findings)


def test_findings_without_fix_change_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, ODD)
    report = doctor_paths([tmp_path])
    assert path.read_text() == ODD
    assert report.has_errors and not report.written
    found = {(f.code, f.path) for f in report.findings}
    assert ("mcp.legacy-type", "spec.type") in found
    assert ("mcp.legacy-disabled", "spec.disabled") in found
    assert ("mcp.legacy-key", "spec.connect_timeout") in found
    assert ("mcp.legacy-key", "spec.codex.default_tools_approval_mode") in found
    assert ("ref.unresolved", "spec.codex.agents[0]") in found
    assert ("ref.unresolved", "spec.mcpServers[1]") in found
    assert ("secret.literal", "spec.headers.Authorization") in found


def test_fix_changes_only_offending_nodes_byte_for_byte(tmp_path: Path) -> None:
    path = write(tmp_path, ODD)
    os.chmod(path, 0o644)
    report = doctor_paths([tmp_path], fix=True)
    assert path.read_text() == FIXED
    assert report.written == [str(path)]
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    fixed = [f for f in report.findings if f.fixed]
    assert len(fixed) == 8 and all(f.fix for f in fixed)
    remaining = {(f.code, f.path) for f in report.remaining}
    assert ("ref.unresolved", "spec.mcpServers[1]") in remaining  # zzz: no close match, only reported
    assert ("secret.literal", "spec.headers.Authorization") in remaining


def test_second_run_changes_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, ODD)
    doctor_paths([tmp_path], fix=True)
    again = doctor_paths([tmp_path], fix=True)
    assert path.read_text() == FIXED and not again.written
    assert not any(f.fixed or f.fix for f in again.findings)


def test_canonical_key_wins_and_legacy_line_is_removed(tmp_path: Path) -> None:
    text = (
        "kind: McpServer\napiVersion: clawplane.dev/v1alpha1\nmetadata:\n  name: s\nspec:\n"
        "  command: sh\n  # keep me\n  enabled: false\n  disabled: false\n  transport: stdio\n"
        "  type: stdio   # gone\n  cwd: .\n  workingDirectory: /elsewhere\n"
    )
    path = write(tmp_path, text)
    doctor_paths([tmp_path], fix=True)
    assert path.read_text() == (
        "kind: McpServer\napiVersion: clawplane.dev/v1alpha1\nmetadata:\n  name: s\nspec:\n"
        "  command: sh\n  # keep me\n  enabled: false\n  transport: stdio\n  cwd: .\n"
    )


def test_ambiguous_reference_is_only_reported(tmp_path: Path) -> None:
    servers = "".join(
        f"---\napiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: {n}\nspec:\n  url: https://e.x/\n"
        for n in ("notes1", "notes2")
    )
    write(tmp_path, servers, "s.yaml")
    agent = "apiVersion: clawplane.dev/v1alpha1\nkind: Agent\nmetadata:\n  name: a\nspec:\n  mcpServers: [notes]\n"
    path = write(tmp_path, agent, "a.yaml")
    report = doctor_paths([tmp_path], fix=True)
    assert path.read_text() == agent
    ref = next(f for f in report.findings if f.code == "ref.unresolved")
    assert not ref.fixed and "candidates: notes1, notes2" in ref.message


def test_channel_agent_and_runtime_checks(tmp_path: Path) -> None:
    text = (
        "apiVersion: clawplane.dev/v1alpha1\nkind: Channel\nmetadata:\n  name: c\nspec:\n  type: telegram\n"
        "  agent: writer\n  credentials:\n    token: '123:abc'\n---\n"
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: my server\nspec:\n"
        "  command: definitely-not-a-real-binary-xyz\n  cwd: ./missing\n---\n"
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: my server\nspec:\n"
        "  command: sh\n"
    )
    write(tmp_path, text)
    assert codes(tmp_path) == [
        "mcp.command-not-found",
        "mcp.cwd-missing",
        "mcp.name-collision",
        "ref.unresolved",
        "secret.literal",
    ]


def test_cli_text_json_and_exit_codes(tmp_path: Path) -> None:
    write(tmp_path, ODD)
    res = runner.invoke(app, ["doctor", str(tmp_path)])
    assert res.exit_code == 1 and "(run with --fix)" in res.output
    res = runner.invoke(app, ["doctor", str(tmp_path), "--fix", "--json"])
    doc = json.loads(res.output)
    assert res.exit_code == 1 and doc["written"] and sum(f["fixed"] for f in doc["findings"]) == 8
    clean = tmp_path / "clean"
    clean.mkdir()
    write(
        clean,
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: s\nspec:\n  command: sh\n",
    )
    res = runner.invoke(app, ["doctor", str(clean)])
    assert res.exit_code == 0 and "0 finding(s)" in res.output


def test_skill_allowlist_entries_naming_no_known_skill(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    original = (
        "apiVersion: clawplane.dev/v1alpha1\nkind: Agent\nmetadata:\n  name: a\nspec:\n"
        "  skills: [git-helpr, house-style, nope]  # keep me\n"
    )
    path.write_text(original)
    report = doctor_paths([tmp_path], known_skills={"git-helper", "house-style"})
    found = [(f.code, f.path, f.fix) for f in report.findings]
    assert found == [
        ("skills.unknown", "spec.skills[0]", "git-helpr -> git-helper"),
        ("skills.unknown", "spec.skills[2]", None),
    ]
    doctor_paths([tmp_path], fix=True, known_skills={"git-helper", "house-style"})
    assert path.read_text() == original.replace("git-helpr", "git-helper")
    assert doctor_paths([tmp_path]).findings == []  # without known skills the check is off


# --- plugins.allow against the shipped catalog of bundled OpenClaw plugins -----------------
PLUGINS = """\
apiVersion: clawplane.dev/v1alpha1
kind: Gateway
metadata:
  name: default
spec:
  plugins:
    # only these load
    allow:
      - anthropik     # typo, one close id
      - 'telegrm'     # two close ids: deepgram, telegram
      - browser
      - zzzz
"""


def test_catalog_is_the_pinned_openclaw() -> None:
    from tests.oracles import locate

    from clawplane.validation.plugins import bundled_plugins

    catalog = bundled_plugins()
    assert catalog.openclaw_version == locate.pins()["OPENCLAW_VERSION"]
    assert {"anthropic", "browser", "telegram", "memory-core"} <= catalog.ids and len(catalog.ids) > 50


def test_plugins_allow_entries_naming_no_bundled_plugin(tmp_path: Path) -> None:
    path = write(tmp_path, PLUGINS)
    report = doctor_paths([tmp_path])
    found = [(f.severity, f.code, f.path, f.fix) for f in report.findings]
    assert found == [
        ("warning", "plugins.unknown", "spec.plugins.allow[0]", "anthropik -> anthropic"),
        ("warning", "plugins.unknown", "spec.plugins.allow[1]", None),
        ("warning", "plugins.unknown", "spec.plugins.allow[3]", None),
    ]
    assert "candidates: deepgram, telegram" in report.findings[1].message
    assert not report.has_errors  # OpenClaw ignores unknown entries: valid config, with a warning
    fixed = doctor_paths([tmp_path], fix=True)
    assert path.read_text() == PLUGINS.replace("anthropik", "anthropic")
    assert [f.fixed for f in fixed.findings] == [True, False, False]
    again = doctor_paths([tmp_path], fix=True)
    assert not again.written and [f.path for f in again.findings] == [
        "spec.plugins.allow[1]",
        "spec.plugins.allow[3]",
    ]


def test_plugins_loaded_from_paths_make_unknown_ids_info_and_never_fixed(tmp_path: Path) -> None:
    text = (
        PLUGINS
        + "  config:\n    plugins:\n      load:\n        paths: [./my-plugins]\n      allow: [my-own]\n"
    )
    path = write(tmp_path, text)
    report = doctor_paths([tmp_path], fix=True)
    assert path.read_text() == text and not report.written
    found = [(f.severity, f.path, f.fix) for f in report.findings]
    assert found == [
        ("info", "spec.plugins.allow[0]", None),
        ("info", "spec.plugins.allow[1]", None),
        ("info", "spec.plugins.allow[3]", None),
        ("info", "spec.config.plugins.allow[0]", None),
    ]
    assert "unless plugins.load.paths provides it (candidates: anthropic)" in report.findings[0].message


# --- UTF-8 byte order marks ------------------------------------------------------------------
BOM = b"\xef\xbb\xbf"
FLOW = (
    '{apiVersion: clawplane.dev/v1alpha1, kind: McpServer, metadata: {name: s}, spec: {type: sse, url: "https://x.example.com/mcp"}}'
    "  # one line\r\n"
)


def test_bom_is_reported_and_left_alone_without_fix(tmp_path: Path) -> None:
    path = tmp_path / "clean.yaml"
    path.write_bytes(
        BOM
        + b"apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: s\nspec:\n  command: sh\n"
    )
    before = path.read_bytes()
    report = doctor_paths([tmp_path])
    assert [(f.code, f.line, f.column, f.severity, f.fix) for f in report.findings] == [
        ("doctor.bom", 1, 1, "warning", "remove the byte order mark")
    ]
    assert path.read_bytes() == before


def test_bom_fix_removes_exactly_three_bytes_and_combines_with_other_fixes(tmp_path: Path) -> None:
    odd, flow, clean = tmp_path / "odd.yaml", tmp_path / "flow.yaml", tmp_path / "clean.yaml"
    odd.write_bytes(BOM + ODD.encode())
    flow.write_bytes(BOM + FLOW.encode())  # a fix on the BOM's own line
    clean_bytes = "# ünïcode comment\r\napiVersion: clawplane.dev/v1alpha1\r\nkind: McpServer\r\nmetadata: {name: c}\r\nspec: {command: sh}\r\n".encode()
    clean.write_bytes(BOM + clean_bytes)
    report = doctor_paths([tmp_path], fix=True)
    assert odd.read_bytes() == FIXED.encode()
    assert flow.read_bytes() == FLOW.replace("type: sse", "transport: sse").encode()
    assert clean.read_bytes() == clean_bytes
    assert sorted(report.written) == sorted(map(str, (clean, flow, odd)))
    boms = [f for f in report.findings if f.code == "doctor.bom"]
    assert len(boms) == 3 and all(f.fixed for f in boms)
    again = doctor_paths([tmp_path], fix=True)
    assert not again.written and not any(f.code == "doctor.bom" or f.fix for f in again.findings)
    assert clean.read_bytes() == clean_bytes


# --- unknown ``type`` values: ignored by OpenClaw, a warning here -------------------------
def test_unknown_type_is_a_warning_and_the_fix_makes_the_inferred_transport_explicit(tmp_path: Path) -> None:
    head = "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: {name}\nspec:\n"
    text = "---\n".join(
        [
            head.format(name="a") + "  command: sh\n  type: weird   # ?\n",
            head.format(name="b") + "  url: https://x.example.com/mcp\n  type: 'WebSocket'\n",
            head.format(name="c")
            + "  url: https://x.example.com/mcp\n  transport: streamable-http\n  type: weird\n",
        ]
    )
    path = write(tmp_path, text)
    report = doctor_paths([tmp_path], fix=True)
    assert [(f.severity, f.code, f.fix) for f in report.findings] == [
        ("warning", "mcp.unknown-type", "type: weird -> transport: stdio"),
        ("warning", "mcp.unknown-type", "type: WebSocket -> transport: sse"),
        ("warning", "mcp.unknown-type", "remove type (transport wins)"),
    ]
    assert "the transport is stdio (from command), as in OpenClaw" in report.findings[0].message
    assert path.read_text() == (
        text.replace("type: weird   # ?", "transport: stdio   # ?")
        .replace("type: 'WebSocket'", "transport: 'sse'")
        .replace("  type: weird\n", "")
    )
