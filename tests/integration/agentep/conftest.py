"""A folder with agents over real stdio fixture servers, applied; SDK clients of ``/mcp/agents/<agent>``."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from tests.fixtures.servers.helpers import authed, script
from tests.integration.engine.conftest import Cli, processes_under
from tests.support import conformance

AGENTS = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: fix}}
spec:
  command: {python}
  args: [{normal}, --name, fix]
  toolFilter: {{exclude: [env, cwd, header]}}
  toolApproval: {{tools: {{add: prompt}}, timeoutMs: 120000}}
---
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: conf}}
spec:
  command: {python}
  args: [{conformance}]
  sessions: shared
---
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: moving}}
spec:
  command: {python}
  args: [{changing}]
---
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: waits}}
spec:
  command: {python}
  args: [{proxy}]
---
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: other}}
spec:
  command: {python}
  args: [{normal}, --name, other]
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {{name: alpha}}
spec:
  mcpServers: [fix, conf, moving, waits]
  tools:
    deny: [conf__test_audio_content, conf__json_schema_2020_12_tool]
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {{name: beta}}
spec:
  mcpServers: [fix]
"""


def write_folder(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = AGENTS.format(
        python=json.dumps(sys.executable),
        normal=json.dumps(script("normal")),
        changing=json.dumps(script("changing")),
        proxy=json.dumps(script("proxy")),
        conformance=json.dumps(conformance.fixture_stdio_argv()[1]),
    )
    (folder / "resources.yaml").write_text(text)


@contextlib.contextmanager
def applied(folder: Path) -> Iterator[Cli]:
    """``folder`` applied (its supervisor runs); stopped afterwards."""
    write_folder(folder)
    with running(folder) as cli:
        yield cli


@contextlib.contextmanager
def running(folder: Path) -> Iterator[Cli]:
    """``folder`` as it is, applied (its supervisor runs); stopped afterwards."""
    cli = Cli(folder)
    try:
        done = cli("apply", str(folder), "--yes")
        assert done.returncode == 0, done.stdout + done.stderr
        yield cli
    finally:
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Cli]]:
    """One applied folder for the tests of a module."""
    folder = tmp_path_factory.mktemp("agentep") / "folder"
    with applied(folder) as cli:
        yield folder, cli


def endpoint(folder: Path) -> str:
    return str(json.loads((folder / ".clawplane" / "supervisor.pid").read_text())["endpoint"])


def token(cli: Cli, folder: Path, consumer: str) -> str:
    return cli("token", "show", str(folder), consumer).stdout.strip()


def tools_json(folder: Path, agent: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(
        (folder / ".clawplane" / "out" / "agents" / agent / "tools.json").read_text()
    )
    return rows


@contextlib.asynccontextmanager
async def agent_client(
    folder: Path, cli: Cli, agent: str, *, mode: str = "auto", consumer: str | None = None, **kwargs: Any
) -> AsyncIterator[Client]:
    """An SDK client of ``/mcp/agents/<agent>`` with the agent's own token (or ``consumer``'s)."""
    bearer = token(cli, folder, consumer or f"agent:{agent}")
    async with authed(f"{endpoint(folder)}/mcp/agents/{agent}", bearer, mode=mode, **kwargs) as client:
        yield client


def notice(kind: type[Any]) -> tuple[anyio.Event, Callable[[Any], Awaitable[None]]]:
    """An event, and a client ``message_handler`` that sets it when a ``kind`` notification arrives."""
    seen = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, kind):
            seen.set()

    return seen, on_message


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
