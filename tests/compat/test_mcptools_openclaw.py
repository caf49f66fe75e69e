"""``clawplane mcp tools`` against ``openclaw mcp tools`` (OpenClaw 2026.9.6): same filters, same outcomes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.oracles.runners import OpenClawOracle
from typer.testing import CliRunner

from clawplane.cli.app import app

runner = CliRunner()
pytestmark = pytest.mark.compat

SERVERS = {"n": {"command": "node", "args": ["s.js"]}, "r": {"url": "https://x.example.com/mcp"}}
EDITS: list[tuple[str, ...]] = [
    ("n", "--include", "read_*, list,read_*"),
    ("n", "--exclude", "x,,y "),
    ("r", "--include", "a,b"),
    ("r", "--include", ""),
    ("n", "--clear"),
    ("r", "--clear", "--include", "b"),
    ("n",),
    ("missing", "--include", "a"),
]


def test_tool_filter_edits_match_openclaw(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    openclaw.write_config({"mcp": {"servers": SERVERS}})
    folder = tmp_path / "resources"
    folder.mkdir()
    for name, server in SERVERS.items():
        assert runner.invoke(app, ["mcp", "set", str(folder), name, json.dumps(server)]).exit_code == 0
    (folder / "mcp-servers.yaml").write_text(
        "# team servers\n" + (folder / "mcp-servers.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    # One OpenClaw process (tests/oracles/openclaw_batch.mjs): each edit, then `mcp show` of
    # every server, so the stored objects are compared after every step.
    shows = [("mcp", "show", server, "--json") for server in SERVERS]
    results = iter(openclaw.batch([c for name, *opts in EDITS for c in [("mcp", "tools", name, *opts), *shows]]))
    for name, *options in EDITS:
        theirs = next(results)
        ours = runner.invoke(app, ["mcp", "tools", str(folder), name, *options])
        assert (theirs.returncode == 0) == (ours.exit_code == 0), (name, options, ours.output)
        if theirs.returncode == 0:
            assert ours.output.startswith(f'Updated MCP tool selection for "{name}" in ')
        else:
            assert theirs.stderr.strip().splitlines()[-1].split(" in ")[0] in ours.output
        for server in SERVERS:
            stored = json.loads(next(results).stdout)
            shown = runner.invoke(app, ["mcp", "show", str(folder), server, "--json"])
            assert json.loads(shown.output) == stored, (name, options, server)
    assert (folder / "mcp-servers.yaml").read_text(encoding="utf-8").startswith("# team servers\n")
