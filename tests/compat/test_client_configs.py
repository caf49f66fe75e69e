"""The client configs clawplane renders, read by the real clients' own CLIs or checked by their schemas.

- Claude Code 2.1 (npm ``@anthropic-ai/claude-code``): ``claude mcp list`` and ``claude mcp get``
  in a project holding the rendered ``.mcp.json``: every server is listed with its command or
  URL and transport, and no config diagnostic is printed (unknown type, missing variable...).
- Claude Desktop has no CLI on Linux; its file has Claude Code's ``mcpServers`` format, so Claude
  Code's parser reads it in the same way.
- Gemini CLI 0.61 (npm ``@google/gemini-cli``): ``gemini mcp list`` in a project holding the
  rendered ``.gemini/settings.json``; Gemini validates the file against its settings schema and
  prints "Invalid configuration" for any mistake.
- VS Code and Cursor publish no CLI that runs here: the renders are validated against JSON Schemas
  in ``tests/fixtures/client-schemas`` (VS Code's own ``mcpServerSchema`` from
  ``src/vs/workbench/contrib/mcp/common/mcpConfiguration.ts``, Cursor's documented format).

All runs are offline (``unshare -n``) with an isolated HOME.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.compat.conftest import require_oracle
from tests.oracles import locate

from clawplane.models import McpServer
from clawplane.models.mcpserver import McpClient
from clawplane.render.clients import render_client_configs

API = "clawplane.dev/v1alpha1"
SCHEMAS = Path(__file__).resolve().parents[1] / "fixtures" / "client-schemas"
HOSTED_URL = "http://127.0.0.1:4100/mcp/notes"
SPECS: dict[str, dict[str, Any]] = {
    "notes": {"command": "python3", "args": ["notes.py"]},  # hosted by clawplane
    "local": {"hosting": "consumer", "command": "python3", "args": ["srv.py", "--flag"],
              "env": {"MODE": "fast", "API_TOKEN": {"valueFrom": {"env": "API_TOKEN"}}}},
    "remote": {"transport": "streamable-http", "url": "https://mcp.example.com/mcp",
               "headers": {"Authorization": {"valueFrom": {"env": "REMOTE_AUTH"}}}},
    "events": {"transport": "sse", "url": "https://mcp.example.com/sse"},
    "filtered": {"hosting": "consumer", "command": "python3", "args": ["f.py"],
                 "toolFilter": {"include": ["read_file", "list_dir"]}},
}
ENV = {"API_TOKEN": "t0k", "REMOTE_AUTH": "Bearer r3m"}


def _render(client: McpClient) -> dict[str, Any]:
    servers = [McpServer.model_validate({"apiVersion": API, "kind": "McpServer", "metadata": {"name": n},
                                         "spec": {**s, "clients": {"targets": [client.value]}}})
               for n, s in SPECS.items()]
    files, _ = render_client_configs("main", servers, hosted_urls={"notes": HOSTED_URL}, base_dirs={},
                                     tokens={f"client:{client.value}:main": "consumer-token"})
    (text,) = files.values()
    doc: dict[str, Any] = json.loads(text)
    return doc


def _run(cmd: list[str], home: Path, cwd: Path, *, without: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    if shutil.which("unshare") is None:
        pytest.skip("unshare is needed to keep the client offline")
    env = {"HOME": str(home), "PATH": os.pathsep.join([str(Path(shutil.which("node") or "node").parent),
                                                      locate.SYSTEM_PATH]),
           "NO_COLOR": "1", "LANG": "C.UTF-8", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", **{k: v for k, v in ENV.items() if k not in without}}
    return subprocess.run(["unshare", "-n", *cmd], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=180, check=False)


def _project(tmp_path: Path, rel: str, doc: dict[str, Any]) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / rel).parent.mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    (project / rel).write_text(json.dumps(doc, indent=2))
    return home, project


def _claude_list(tmp_path: Path, doc: dict[str, Any]) -> str:
    require_oracle("claude")
    cmd = locate.claude_cmd()
    assert cmd is not None
    home, project = _project(tmp_path, ".mcp.json", doc)
    proc = _run([*cmd, "mcp", "list"], home, project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "MCP config diagnostics" not in out, out
    return out


def test_claude_code_reads_the_rendered_mcp_json(tmp_path: Path) -> None:
    doc = _render(McpClient.CLAUDE_CODE)
    assert set(doc["mcpServers"]) == {"notes", "local", "remote", "events"}  # "filtered" cannot be filtered here
    out = _claude_list(tmp_path, doc)
    assert f"notes: {HOSTED_URL} (HTTP)" in out
    assert "local: python3 srv.py --flag" in out
    assert "remote: https://mcp.example.com/mcp (HTTP)" in out
    assert "events: https://mcp.example.com/sse (SSE)" in out
    cmd = locate.claude_cmd()
    assert cmd is not None
    got = _run([*cmd, "mcp", "get", "local"], tmp_path / "home", tmp_path / "project")
    assert got.returncode == 0 and re.search(r"Type:\s+stdio", got.stdout), got.stdout + got.stderr
    # With the variables unset Claude Code says so: the references really are references.
    missing = _run([*cmd, "mcp", "list"], tmp_path / "home", tmp_path / "project", without=("API_TOKEN", "REMOTE_AUTH"))
    assert "Missing environment variables" in missing.stdout + missing.stderr


def test_claude_desktop_entries_parse_as_claude_code_mcp_servers(tmp_path: Path) -> None:
    doc = _render(McpClient.CLAUDE_DESKTOP)
    assert set(doc["mcpServers"]) == {"local"}  # stdio only; the reference-only env var is left out
    assert doc["mcpServers"]["local"] == {"command": "python3", "args": ["srv.py", "--flag"], "env": {"MODE": "fast"}}
    out = _claude_list(tmp_path, doc)
    assert "local: python3 srv.py --flag" in out


def test_gemini_cli_reads_the_rendered_settings(tmp_path: Path) -> None:
    require_oracle("gemini")
    cmd = locate.gemini_cmd()
    assert cmd is not None
    doc = _render(McpClient.GEMINI_CLI)
    assert doc["mcpServers"]["filtered"]["includeTools"] == ["read_file", "list_dir"]
    assert all(entry["trust"] is False for entry in doc["mcpServers"].values())
    home, project = _project(tmp_path, ".gemini/settings.json", doc)
    # Trust the project folder (Gemini otherwise lists its servers as disabled).
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text('{"security": {"folderTrust": {"enabled": false}}}')
    proc = _run([*cmd, "mcp", "list"], home, project)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Invalid configuration" not in out, out
    for line in (f"notes: {HOSTED_URL} (http)", "local: python3 srv.py --flag (stdio)",
                 "remote: https://mcp.example.com/mcp (http)", "events: https://mcp.example.com/sse (sse)",
                 "filtered: python3 f.py (stdio)"):
        assert line in out, (line, out)


@pytest.mark.parametrize(("client", "schema"), [(McpClient.VSCODE, "vscode-mcp.schema.json"),
                                                (McpClient.CURSOR, "cursor-mcp.schema.json")])
def test_vscode_and_cursor_renders_match_their_schemas(client: McpClient, schema: str) -> None:
    doc = _render(client)
    validator = jsonschema.Draft7Validator(json.loads((SCHEMAS / schema).read_text()))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
    assert errors == []
    # The schemas can fail: an entry in the wrong shape is rejected.
    broken = json.loads(json.dumps(doc))
    key = "servers" if client is McpClient.VSCODE else "mcpServers"
    broken[key]["local"]["args"] = "not a list"
    assert list(validator.iter_errors(broken))
