"""The MCP conformance suite (0.1.16, ``--suite all``) against an aggregated endpoint, ``/mcp/agents/<agent>``.

Agent ``conf`` has one server, the conformance fixture over stdio, hosted by a folder's
supervisor. An aggregating server names tools and prompts ``<server>__<name>`` (OpenClaw's
names), so the scenarios that call the fixture's tools or prompts by their own names do not
apply to it (``RENAMED``); every other scenario that passes directly must pass here. The
docs/mcp-hosting.md lists both.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.compat.conftest import SuiteRunner
from tests.support import conformance

SUITE_TIMEOUT = 240.0
"""Every scenario opens a session, each starting a fixture process of its own (perClient)."""
pytestmark = [pytest.mark.compat, pytest.mark.timeout(SUITE_TIMEOUT + conformance.TEST_TIMEOUT)]
CLAWPLANE = [sys.executable, "-m", "clawplane"]

RENAMED = tuple(
    s
    for s in conformance.SCENARIOS_ALL
    if s.startswith(("tools-call-", "prompts-get-", "elicitation-"))
    or s in ("json-schema-2020-12", "completion-complete")
)
"""Scenarios that call a fixture tool or prompt by its own name (here it is ``conformance__<name>``);
``completion-complete`` completes an argument of a prompt it names that way."""


@pytest.fixture
def agent_endpoint(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A folder with the fixture and agent ``conf``, applied; yields the endpoint's URL and token."""
    folder = tmp_path / "folder"
    folder.mkdir()
    argv = conformance.fixture_stdio_argv()
    (folder / "resources.yaml").write_text(
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata: {name: conformance}\n"
        f"spec: {{command: {json.dumps(argv[0])}, args: {json.dumps(argv[1:])}, maxSessions: 64}}\n"
        "---\napiVersion: clawplane.dev/v1alpha1\nkind: Agent\nmetadata: {name: conf}\n"
        "spec: {mcpServers: [conformance]}\n"
    )
    run = lambda *args: subprocess.run([*CLAWPLANE, *args], capture_output=True, text=True, timeout=300)  # noqa: E731
    applied = run("apply", str(folder), "--yes")
    try:
        assert applied.returncode == 0, applied.stdout + applied.stderr
        base = json.loads((folder / ".clawplane" / "supervisor.pid").read_text())["endpoint"]
        token = run("token", "show", str(folder), "agent:conf").stdout.strip()
        yield f"{base}/mcp/agents/conf/mcp", token
    finally:
        run("down", str(folder))


def test_every_scenario_that_applies_to_an_aggregating_server_passes(
    conformance_direct: conformance.SuiteResults,
    conformance_suite: SuiteRunner,
    agent_endpoint: tuple[str, str],
) -> None:
    url, token = agent_endpoint
    through = conformance_suite(url, token=token, timeout=SUITE_TIMEOUT)
    applies = set(conformance_direct.passing) - set(RENAMED)
    assert applies <= set(through.passing), through.report()
    assert len(applies) >= 13, conformance_direct.report()
    assert through.forwarded is not None and all(f.status < 500 for f in through.forwarded)
