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
from pathlib import Path
from typing import Any

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
    expected = ["docs", "remote", "odd", "stdio"]
    # One OpenClaw process runs the whole sequence (tests/oracles/openclaw_batch.mjs).
    results = openclaw.batch(
        [
            *(("mcp", *op) for op in OPS),
            ("mcp", "list", "--json"),
            *(("mcp", "show", name, "--json") for name in expected),
            ("mcp", "show", "notes", "--json"),
        ]
    )
    edits, (listed, *shown, missing) = results[: len(OPS)], results[len(OPS) :]
    for op, theirs in zip(OPS, edits, strict=True):
        assert (theirs.returncode == 0) == (_clawplane(folder, op) == 0), op

    ours = _clawplane_json(folder, "list")
    assert list(json.loads(listed.stdout)) == list(ours) == expected
    for name, theirs in zip(expected, shown, strict=True):
        mine, stored = _clawplane_json(folder, "show", name), json.loads(theirs.stdout)
        assert mine == stored, name
        assert list(mine) == list(stored), name  # same key order (new canonical keys appended)
    assert ours["docs"]["transport"] == "streamable-http" and "type" not in ours["docs"]
    assert ours["odd"] == {"url": URL, "cwd": "/a"}

    assert missing.returncode == 1
    assert runner.invoke(app, ["mcp", "show", str(folder), "notes", "--json"]).exit_code == 1


def test_unknown_type_is_kept_and_ignored_like_openclaw(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    openclaw.write_config({})
    folder = tmp_path / "resources"
    folder.mkdir()
    servers = {
        "weird-stdio": {"command": "node", "type": "weird"},
        "weird-remote": {"url": URL, "type": "Weird"},
    }
    bad_transport = json.dumps({"url": URL, "transport": "weird"})  # transport is checked by both
    alone = json.dumps({"type": "weird"})
    calls: list[tuple[str, ...]] = []
    for name, server in servers.items():
        calls += [("mcp", "set", name, json.dumps(server)), ("mcp", "show", name, "--json")]
    calls += [("mcp", "status", "--json"), ("mcp", "set", "bad", bad_transport), ("mcp", "set", "alone", alone)]
    results = openclaw.batch(calls)
    for i, (name, server) in enumerate(servers.items()):
        set_, show = results[2 * i], results[2 * i + 1]
        assert set_.returncode == 0, set_.stderr
        result = runner.invoke(app, ["mcp", "set", str(folder), name, json.dumps(server)])
        assert result.exit_code == 0, result.output
        assert "warning[mcp.unknown-type]" in result.output
        assert _clawplane_json(folder, "show", name) == json.loads(show.stdout) == server
    status_run, bad_run, alone_run = results[-3:]
    status = {s["name"]: s["transport"] for s in json.loads(status_run.stdout)["servers"]}
    assert status == {"weird-stdio": "stdio", "weird-remote": "sse"}
    loaded = validate_paths([folder])
    assert not loaded.diagnostics.has_errors
    ours = {r.resource.name: r.resource.spec.effective_transport for r in loaded.of_kind("McpServer")}
    assert ours == status

    assert bad_run.returncode == 1
    assert runner.invoke(app, ["mcp", "set", str(folder), "bad", bad_transport]).exit_code == 1

    assert alone_run.returncode == 0  # stored, skipped at run time
    result = runner.invoke(app, ["mcp", "set", str(folder), "alone", alone])
    assert result.exit_code == 1 and "needs a command (stdio) or a url" in result.output
