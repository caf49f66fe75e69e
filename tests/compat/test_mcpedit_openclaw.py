"""``clawplane mcp set/unset/show/list`` against ``openclaw mcp …`` (OpenClaw 2026.9.6).

The same sequence of edits goes to the real ``openclaw mcp set/unset`` (on an openclaw.json
under an isolated HOME) and to ``clawplane mcp set/unset`` (on a resource folder); the
stored server objects (``mcp show NAME --json``, incl. key order) and the verbs' outcomes
must agree.

An unknown ``type`` such as ``"weird"`` is kept by both and ignored when choosing the
transport (command → stdio, else url → sse, as ``openclaw mcp status`` shows); clawplane
warns (``mcp.unknown-type``). Known, deliberate divergence: ``{"type": "weird"}`` alone
(no command, no url) is stored by OpenClaw and then skipped at run time; clawplane refuses
it ("an MCP server needs a command (stdio) or a url") and writes nothing.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.oracles.runners import OpenClawOracle
from typer.testing import CliRunner

from clawplane.cli.app import app
from clawplane.validation import validate_paths

runner = CliRunner()

URL = "https://docs.example.com/mcp"
OPS: list[tuple[str, ...]] = [
    (
        "set",
        "notes",
        json.dumps(
            {
                "command": "node",
                "args": ["server.js"],
                "workingDirectory": "/tmp",
                "supports_parallel_tool_calls": True,
                "env": {"MODE": "dev"},
            }
        ),
    ),
    (
        "set",
        "docs",
        json.dumps(
            {
                "url": URL,
                "type": "http",
                "supports_parallel_tool_calls": True,
                "workingDirectory": "/tmp",
                "codex": {"default_tools_approval_mode": "auto"},
            }
        ),
    ),
    (
        "set",
        "remote",
        json.dumps(
            {
                "url": URL,
                "type": "SSE",
                "ssl_verify": False,
                "client_cert": "/tmp/c.pem",
                "client_key": "/tmp/k.pem",
            }
        ),
    ),
    (
        "set",
        "docs",
        json.dumps(
            {
                "url": URL,
                "type": "sse",
                "transport": "streamable-http",
                "toolFilter": {"include": ["read_*"]},
                "requestTimeoutMs": 12500,
            }
        ),
    ),
    ("set", "odd", json.dumps({"url": URL, "cwd": "/a", "workingDirectory": "/b"})),
    ("set", "broken", json.dumps({"transport": "stdio"})),
    ("set", "notarray", "[1, 2]"),
    ("unset", "notes"),
    ("unset", "notes"),
    (
        "set",
        "stdio",
        json.dumps({"command": "npx", "type": "stdio", "args": ["-y", "pkg"], "enabled": False}),
    ),
]


def _openclaw(oc: OpenClawOracle, op: tuple[str, ...]) -> int:
    return oc.run("mcp", *op).returncode


def _clawplane(folder: Path, op: tuple[str, ...]) -> int:
    verb, *rest = op
    return runner.invoke(app, ["mcp", verb, str(folder), *rest]).exit_code


def _clawplane_json(folder: Path, *args: str) -> Any:
    verb, *rest = args
    result = runner.invoke(app, ["mcp", verb, str(folder), *rest, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.oracle_calls(len(OPS) + 6)
def test_same_edits_same_servers(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    openclaw.write_config({})
    folder = tmp_path / "resources"
    folder.mkdir()
    for op in OPS:
        assert (_openclaw(openclaw, op) == 0) == (_clawplane(folder, op) == 0), op

    theirs = openclaw.json("mcp", "list", "--json")
    ours = _clawplane_json(folder, "list")
    assert list(theirs) == list(ours) == ["docs", "remote", "odd", "stdio"]
    # The reads change nothing, so they run side by side (each is a separate OpenClaw start).
    with ThreadPoolExecutor(max_workers=len(theirs) + 1) as pool:
        shows = {name: pool.submit(openclaw.json, "mcp", "show", name, "--json") for name in theirs}
        missing = pool.submit(openclaw.run, "mcp", "show", "notes", "--json")
    for name, shown in ((n, f.result()) for n, f in shows.items()):
        mine = _clawplane_json(folder, "show", name)
        assert mine == shown, name
        assert list(mine) == list(shown), name  # same key order (new canonical keys appended)
    assert ours["docs"]["transport"] == "streamable-http" and "type" not in ours["docs"]
    assert ours["odd"] == {"url": URL, "cwd": "/a"}

    assert missing.result().returncode == 1
    assert runner.invoke(app, ["mcp", "show", str(folder), "notes", "--json"]).exit_code == 1


@pytest.mark.oracle_calls(8)
def test_unknown_type_is_kept_and_ignored_like_openclaw(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    openclaw.write_config({})
    folder = tmp_path / "resources"
    folder.mkdir()
    servers = {
        "weird-stdio": {"command": "node", "type": "weird"},
        "weird-remote": {"url": URL, "type": "Weird"},
    }
    for name, server in servers.items():
        assert _openclaw(openclaw, ("set", name, json.dumps(server))) == 0
        result = runner.invoke(app, ["mcp", "set", str(folder), name, json.dumps(server)])
        assert result.exit_code == 0, result.output
        assert "warning[mcp.unknown-type]" in result.output
        assert _clawplane_json(folder, "show", name) == openclaw.json("mcp", "show", name, "--json") == server
    status = {s["name"]: s["transport"] for s in openclaw.json("mcp", "status", "--json")["servers"]}
    assert status == {"weird-stdio": "stdio", "weird-remote": "sse"}
    loaded = validate_paths([folder])
    assert not loaded.diagnostics.has_errors
    ours = {r.resource.name: r.resource.spec.effective_transport for r in loaded.of_kind("McpServer")}
    assert ours == status

    bad_transport = json.dumps({"url": URL, "transport": "weird"})  # transport is checked by both
    assert _openclaw(openclaw, ("set", "bad", bad_transport)) == 1
    assert runner.invoke(app, ["mcp", "set", str(folder), "bad", bad_transport]).exit_code == 1

    alone = json.dumps({"type": "weird"})
    assert _openclaw(openclaw, ("set", "alone", alone)) == 0  # stored, skipped at run time
    result = runner.invoke(app, ["mcp", "set", str(folder), "alone", alone])
    assert result.exit_code == 1 and "needs a command (stdio) or a url" in result.output
