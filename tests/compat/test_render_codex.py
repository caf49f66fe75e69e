"""Rendered Codex config.toml files are accepted by the real Codex CLI (isolated CODEX_HOME, offline)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from tests.oracles.runners import CodexOracle
from tests.unit.render.build import Folder, hosted, load_folder, server

from clawplane.render import render_codex_config

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"


def _servers(tmp_path: Path) -> list[Any]:
    return [
        server("hosted", command="python3", args=["h.py"], env={"K": "v"}, codex={"defaultToolsApprovalMode": "approve"}),
        server("files", hosting="consumer", command="mcp-files", args=["--root", "/srv"], cwd="data",
               env={"GITHUB_TOKEN": {"valueFrom": {"env": "GITHUB_TOKEN"}}, "LEVEL": 2},
               connectionTimeoutMs=15000, requestTimeoutMs=12500, supportsParallelToolCalls=True,
               toolFilter={"include": ["read", "list"], "exclude": ["delete"]},
               codex={"agents": ["coder"], "defaultToolsApprovalMode": "prompt"}),
        server("web", transport="streamable-http", url="http://127.0.0.1:9/mcp",
               headers={"Authorization": {"valueFrom": {"env": "WEB_TOKEN"}}, "X-Static": "abc"},
               toolFilter={"exclude": ["debug_*"]}, toolApproval={"tools": {"search": "prompt", "debug_*": "writes"}}),
        server("old-sse", url="http://127.0.0.1:9/sse"),
        server("off", enabled=False, hosting="consumer", command="mcp-off", codex={"defaultToolsApprovalMode": "auto"}),
        server("writer-only", hosting="consumer", command="w", codex={"agents": ["writer"]}),
        server("dotted.name", hosting="consumer", command="d"),
    ]  # fmt: skip


def _render(agent_id: str, servers: list[Any], tmp_path: Path, **kwargs: Any) -> str:
    text, diagnostics = render_codex_config(
        agent_id,
        servers,
        hosted_urls=hosted(*servers),
        base_dirs={s.key: tmp_path for s in servers},
        discovered_tools={"web": ["search", "debug_dump", "fetch"]},
        **kwargs,
    )
    assert not [d for d in diagnostics if d.is_error], diagnostics
    return text


def _listed(codex: CodexOracle) -> dict[str, dict[str, Any]]:
    proc = codex.run("mcp", "list", "--json", env={"RUST_BACKTRACE": "0"})
    assert proc.returncode == 0, proc.stderr
    return {entry["name"]: entry for entry in json.loads(proc.stdout)}


def _approval(codex: CodexOracle, name: str) -> str | None:
    proc = codex.run("mcp", "get", name, env={"RUST_BACKTRACE": "0"})
    assert proc.returncode == 0, proc.stderr
    for line in proc.stdout.splitlines():
        if line.strip().startswith("default_tools_approval_mode:"):
            return line.split(":", 1)[1].strip()
    return None


@pytest.mark.parametrize(
    ("agent_id", "expected"),
    [
        ("coder", {"hosted", "files", "web", "off", "dotted.name"}),
        ("writer", {"hosted", "web", "off", "writer-only", "dotted.name"}),
    ],
)
def test_codex_accepts_and_lists_exactly_the_projected_servers(
    codex: CodexOracle, tmp_path: Path, agent_id: str, expected: set[str]
) -> None:
    servers = _servers(tmp_path)
    text = _render(agent_id, servers, tmp_path)
    codex.write_config(text)
    strict = codex.strict_check()
    assert strict.returncode == 0, strict.stdout + strict.stderr
    listed = _listed(codex)
    assert set(listed) == expected
    assert listed["hosted"]["transport"]["type"] == "streamable_http"
    assert listed["hosted"]["transport"]["url"] == hosted(*servers)["hosted"]
    assert listed["off"]["enabled"] is False
    assert listed["web"]["transport"]["env_http_headers"] == {"Authorization": "WEB_TOKEN"}
    assert listed["web"]["transport"]["http_headers"] == {"X-Static": "abc"}
    assert _approval(codex, "hosted") == "approve"
    if agent_id == "coder":
        files = listed["files"]
        assert files["transport"]["command"] == "mcp-files"
        assert files["transport"]["cwd"] == str(tmp_path / "data")
        assert files["transport"]["env"] == {"LEVEL": "2"}
        assert files["transport"]["env_vars"] == ["GITHUB_TOKEN"]
        assert (files["startup_timeout_sec"], files["tool_timeout_sec"]) == (15.0, 12.5)
        assert _approval(codex, "files") == "prompt"
    parsed = tomllib.loads(text)["mcp_servers"]
    assert parsed["web"]["enabled_tools"] == ["search", "fetch"]
    # toolApproval: Codex's own per-tool approval modes, accepted by the strict check above.
    assert parsed["web"]["tools"] == {"debug_dump": {"approval_mode": "writes"}, "search": {"approval_mode": "prompt"}}


def test_codex_quickstart(codex: CodexOracle, tmp_path: Path) -> None:
    folder: Folder = load_folder(QUICKSTART)
    for agent in folder.agents:
        text, diagnostics = render_codex_config(
            agent.name,
            folder.servers,
            hosted_urls=hosted(*folder.servers),
            base_dirs=folder.base_dirs,
            discovered_tools={"notes": ["add_note", "list_notes", "debug_state"]},
        )
        assert not [d for d in diagnostics if d.is_error]
        codex.write_config(text)
        assert codex.strict_check().returncode == 0
        listed = _listed(codex)
        expected = {"notes", "docs-search"} if agent.name == "coder" else {"docs-search"}
        assert set(listed) == expected
        if agent.name == "coder":
            assert _approval(codex, "notes") == "prompt"
            assert tomllib.loads(text)["mcp_servers"]["notes"]["enabled_tools"] == ["add_note", "list_notes"]


def test_resolved_secrets_are_accepted(codex: CodexOracle, tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("file-secret\n")
    srv = server("s", hosting="consumer", command="x", env={"TOKEN": {"valueFrom": {"file": "tok"}}})
    codex.write_config(_render("a", [srv], tmp_path, resolve_secrets=True))
    assert codex.strict_check().returncode == 0
    assert _listed(codex)["s"]["transport"]["env"] == {"TOKEN": "file-secret"}
