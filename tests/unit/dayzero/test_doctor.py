"""``clawplane doctor``: findings and byte-preserving fixes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from clawplane.cli.app import app
from clawplane.validation.doctor import doctor_paths

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
