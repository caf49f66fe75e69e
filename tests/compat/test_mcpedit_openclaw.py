"""``clawplane mcp set/unset/show/list`` against ``openclaw mcp …`` (OpenClaw 2026.9.6).

The same sequence of edits goes to the real ``openclaw mcp set/unset`` (on an openclaw.json
under an isolated HOME) and to ``clawplane mcp set/unset`` (on a resource folder); the
stored server objects (``mcp show NAME --json``, incl. key order) and the verbs' outcomes
must agree.

Known, deliberate divergence (not exercised here): an unknown ``type`` such as
``"websocket"`` is kept and accepted by OpenClaw, but clawplane's validation rejects it
(``mcp.unknown-type``), so ``clawplane mcp set`` refuses it and writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.oracles.runners import OpenClawOracle
from typer.testing import CliRunner

from clawplane.cli.app import app

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


def test_same_edits_same_servers(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    openclaw.write_config({})
    folder = tmp_path / "resources"
    folder.mkdir()
    for op in OPS:
        assert (_openclaw(openclaw, op) == 0) == (_clawplane(folder, op) == 0), op

    theirs = openclaw.json("mcp", "list", "--json")
    ours = _clawplane_json(folder, "list")
    assert list(theirs) == list(ours) == ["docs", "remote", "odd", "stdio"]
    for name in theirs:
        shown = openclaw.json("mcp", "show", name, "--json")
        mine = _clawplane_json(folder, "show", name)
        assert mine == shown, name
        assert list(mine) == list(shown), name  # same key order (new canonical keys appended)
    assert ours["docs"]["transport"] == "streamable-http" and "type" not in ours["docs"]
    assert ours["odd"] == {"url": URL, "cwd": "/a"}

    assert openclaw.run("mcp", "show", "notes", "--json").returncode == 1
    assert runner.invoke(app, ["mcp", "show", str(folder), "notes", "--json"]).exit_code == 1
