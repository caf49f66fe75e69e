"""``clawplane``'s probe against ``openclaw mcp probe --json`` (OpenClaw 2026.9.6) on the same servers.

The fixture with awkward tool names exercises everything the names depend on: unsafe
characters, a leading digit, a 70-character name, UTF-16 units (an emoji), case-insensitive
collisions between tools (``read_file``/``Read_File``), blank and duplicate names, and a
tool filter. Safe names, counts and launch summaries must be identical.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, script
from tests.oracles.runners import OpenClawOracle

from clawplane.models import McpServerSpec
from clawplane.runtimes import ProbeTarget, probe_servers

# OpenClaw (TypeScript SDK) always negotiates 2025-11-25, where Python servers announce no
# list changes; clawplane's sessions are 2026-07-28, where they do. So listChanged differs.
ERA_DEPENDENT = {"listChanged"}

SERVERS: dict[str, dict[str, Any]] = {
    "my server": {"args": [script("awkward_names")], "toolFilter": {"exclude": ["secret_*"]}},
    "My Server": {"args": [script("awkward_names")], "toolFilter": {"include": ["*a*"]}},
    "9 lives": {"args": [script("normal")], "requestTimeoutMs": 15000},
    "a😀b": {"args": [script("normal")], "toolFilter": {"exclude": ["resources_*", "e*"]}},
}


# Both sides get the same generous start budget: OpenClaw's default (5 s) is shorter than a
# Python server's start on a busy machine, and a timeout would make the reports differ.
PATIENT = {"connectionTimeoutMs": int(START_TIMEOUT * 1000)}


def openclaw_config() -> dict[str, Any]:
    return {"mcp": {"servers": {n: {"command": sys.executable, **PATIENT, **s} for n, s in SERVERS.items()}}}


def clawplane_probe(tmp_path: Path) -> dict[str, Any]:
    targets = [
        ProbeTarget(name=n, spec=McpServerSpec(command=sys.executable, **PATIENT, **s), base_dir=tmp_path)
        for n, s in SERVERS.items()
    ]
    report = anyio.run(lambda: probe_servers(targets, settings=FAST))
    return report.to_dict()


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    servers = {
        name: {k: v for k, v in server.items() if k not in ERA_DEPENDENT}
        for name, server in doc["servers"].items()
    }
    return {"servers": servers, "tools": doc["tools"], "diagnostics": doc["diagnostics"]}


def test_probe_matches_openclaw_mcp_probe_json(openclaw: OpenClawOracle, tmp_path: Path) -> None:
    openclaw.write_config(openclaw_config())
    expected = openclaw.json("mcp", "probe", "--json", timeout=180)
    ours = clawplane_probe(tmp_path)

    assert comparable(ours) == comparable(expected)
    assert len(ours["tools"]) > 30
    assert {"my-server__Read_File-2", "My-Server-2__Read_File-2", "mcp-9-lives__echo", "a--b__add"} <= set(
        ours["tools"]
    )
