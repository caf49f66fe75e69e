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


@pytest.mark.oracle_calls(len(EDITS) + 1)
def test_tool_filter_edits_match_openclaw(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    openclaw.write_config({"mcp": {"servers": SERVERS}})
    folder = tmp_path / "resources"
    folder.mkdir()
    for name, server in SERVERS.items():
        assert runner.invoke(app, ["mcp", "set", str(folder), name, json.dumps(server)]).exit_code == 0
    (folder / "mcp-servers.yaml").write_text(
        "# team servers\n" + (folder / "mcp-servers.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    for name, *options in EDITS:
        theirs = openclaw.run("mcp", "tools", name, *options)
        ours = runner.invoke(app, ["mcp", "tools", str(folder), name, *options])
        assert (theirs.returncode == 0) == (ours.exit_code == 0), (name, options, ours.output)
        if theirs.returncode == 0:
            assert ours.output.startswith(f'Updated MCP tool selection for "{name}" in ')
        else:
            assert theirs.stderr.strip().splitlines()[-1].split(" in ")[0] in ours.output
        # `mcp show` prints the stored object; reading the file saves an OpenClaw start per check.
        stored = json.loads(openclaw.config_path.read_text(encoding="utf-8"))["mcp"]["servers"]
        for server in SERVERS:
            shown = runner.invoke(app, ["mcp", "show", str(folder), server, "--json"])
            assert json.loads(shown.output) == stored[server], (name, options)
    assert json.loads(
        runner.invoke(app, ["mcp", "show", str(folder), "n", "--json"]).output
    ) == openclaw.json("mcp", "show", "n", "--json")
    assert (folder / "mcp-servers.yaml").read_text(encoding="utf-8").startswith("# team servers\n")
