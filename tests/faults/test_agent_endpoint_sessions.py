"""Bounded sessions on the supervisor's own MCP endpoints (issue 35, findings 2 and 3).

A folder hosts one server (the fault fixture over stdio, ``perClient``: every agent-endpoint
session that lists tools starts a process of its own, found by the fixture's ``--tag``) and two
agents, applied with the CLI. Raw HTTP clients with the agents' tokens open sessions of
``/mcp/agents/<agent>`` and abandon them or hold them in use; the ``cli`` token does the same on
``/mcp/_clawplane``. Default limits: 32 sessions per endpoint, a consumer's share 24.
"""

from __future__ import annotations

import contextlib
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from tests.fixtures.servers.helpers import script
from tests.integration.engine.conftest import Cli, processes_under
from tests.support import rawsessions as raw
from tests.support.patience import CONDITION_S

pytestmark = pytest.mark.anyio

FOLDER = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: notes}}
spec:
  command: {python}
  args: [{fault}, --tag, {tag}]
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {{name: alpha}}
spec:
  mcpServers: [notes]
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {{name: beta}}
spec:
  mcpServers: [notes]
"""
SHARE = 24
"""Three quarters of the default 32 sessions."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Cli, str]]:
    """The folder applied (its supervisor runs): the folder, its CLI and the server's tag."""
    folder = tmp_path_factory.mktemp("agentsessions") / "folder"
    folder.mkdir()
    tag = f"agentep-{uuid.uuid4().hex[:8]}"
    text = FOLDER.format(python=json.dumps(sys.executable), fault=json.dumps(script("fault")), tag=tag)
    (folder / "resources.yaml").write_text(text)
    cli = Cli(folder)
    try:
        done = cli("apply", str(folder), "--yes")
        assert done.returncode == 0, done.stdout + done.stderr
        yield folder, cli, tag
    finally:
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()


def base_url(folder: Path) -> str:
    return str(json.loads((folder / ".clawplane" / "supervisor.pid").read_text())["endpoint"])


def token(cli: Cli, folder: Path, consumer: str) -> str:
    return cli("token", "show", str(folder), consumer).stdout.strip()


async def test_the_agent_endpoint_has_a_session_limit(applied: tuple[Path, Cli, str]) -> None:
    """40 abandoned sessions of one agent token, each listing tools (a process each): at most its share
    of processes stays; held in use, the agent stops at its share and the other agent still gets in."""
    folder, cli, tag = applied
    alpha, beta = token(cli, folder, "agent:alpha"), token(cli, folder, "agent:beta")
    url = f"{base_url(folder)}/mcp/agents/alpha"
    before = len(raw.tagged(tag))  # the primary
    async with raw.client() as http, contextlib.AsyncExitStack() as held:
        for n in range(40):
            session = await raw.open_session(http, url, alpha)
            listed = await raw.request(http, url, alpha, session, "tools/list")
            assert listed.status_code == 200 and "result" in raw.messages(listed)[0], f"{n}: {listed.text}"
        with anyio.fail_after(CONDITION_S):  # evicted sessions' processes are torn down
            while len(raw.tagged(tag)) > before + SHARE:
                await anyio.sleep(0.05)
        admitted, refused = 0, None
        for _ in range(40):
            response = await raw.initialize(http, url, alpha)
            if response.status_code != 200:
                refused = response
                break
            await raw.hold(held, http, url, alpha, response.headers[raw.SESSION])
            admitted += 1
        other = await raw.initialize(http, f"{base_url(folder)}/mcp/agents/beta", beta)

    assert admitted == SHARE
    assert refused is not None and refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    error = raw.error_of(refused)
    assert error["code"] == -32011
    assert 'consumer "agent:alpha" already holds 24' in error["message"]
    assert "agentSessions.maxSessionsPerConsumer" in error["message"]
    assert other.status_code == 200, other.text


async def test_the_control_plane_has_a_session_limit(applied: tuple[Path, Cli, str]) -> None:
    """``/mcp/_clawplane``: one token holds at most its share of sessions in use; another still gets in."""
    folder, cli, _ = applied
    url = f"{base_url(folder)}/mcp/_clawplane"
    operator, reader = token(cli, folder, "cli"), token(cli, folder, "reader")
    async with raw.client() as http, contextlib.AsyncExitStack() as held:
        admitted, refused = 0, None
        for _ in range(40):
            response = await raw.initialize(http, url, operator)
            if response.status_code != 200:
                refused = response
                break
            await raw.hold(held, http, url, operator, response.headers[raw.SESSION])
            admitted += 1
        other = await raw.initialize(http, url, reader)

    assert admitted == SHARE
    assert refused is not None and refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert "controlSessions.maxSessionsPerConsumer" in raw.error_of(refused)["message"]
    assert other.status_code == 200, other.text


MALFORMED_IDS = ["{}", "[]", "NaN", "1.5", "null"]


async def test_malformed_ids_get_invalid_request_on_the_agent_endpoint_and_control_plane(
    applied: tuple[Path, Cli, str],
) -> None:
    """The SDK-served endpoints refuse unroutable ids with HTTP 400 and ``-32600``, before a session
    opens and within one."""
    folder, cli, _ = applied
    targets = [
        (f"{base_url(folder)}/mcp/agents/alpha", token(cli, folder, "agent:alpha")),
        (f"{base_url(folder)}/mcp/_clawplane", token(cli, folder, "cli")),
    ]
    answers = []
    async with raw.client() as http:
        for url, bearer in targets:
            session = await raw.open_session(http, url, bearer)
            for bad in MALFORMED_IDS:
                opening = '{"jsonrpc": "2.0", "id": ' + bad + ', "method": "initialize", "params": {}}'
                answers.append((url, bad, await raw.post(http, url, bearer, opening)))
                within = '{"jsonrpc": "2.0", "id": ' + bad + ', "method": "tools/list"}'
                answers.append((url, bad, await raw.post(http, url, bearer, within, session)))
            answers.append((url, "1", await raw.request(http, url, bearer, session, "tools/list")))
    for url, bad, response in answers:
        if bad == "1":
            assert response.status_code == 200, (url, response.text)
            continue
        assert response.status_code == 400, (url, bad, response.status_code, response.text)
        assert raw.error_of(response)["code"] == -32600, (url, bad, response.text)
