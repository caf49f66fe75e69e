"""``@modelcontextprotocol/server-everything`` (npm, nobody here wrote it) under the supervisor.

Over all three transports: stdio (the supervisor spawns it), SSE and streamable HTTP (it runs
as its own process and the supervisor connects with headers). It speaks the handshake era
(2025-11-25), so these tests also cover the SDK's fallback from ``server/discover``.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from subprocess import STDOUT

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, live
from tests.oracles.runners import StdioServer

from clawplane.models import McpServerSpec
from clawplane.runtimes import Phase, RuntimeStatus, Supervisor, ToolKind

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def ready(status: RuntimeStatus) -> bool:
    return status.phase is Phase.READY


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def everything_over_http(server: StdioServer, mode: str) -> AsyncIterator[str]:
    """Run server-everything in ``sse`` or ``streamableHttp`` mode; yields its URL."""
    port = free_port()
    argv = [server.command, *server.args[:-1], mode]
    process = await anyio.open_process(argv, env={**server.env, "PORT": str(port)}, stderr=STDOUT)
    try:
        assert process.stdout is not None
        seen = ""
        with anyio.fail_after(START_TIMEOUT):
            async for chunk in TextReceiveStream(process.stdout):
                seen += chunk
                if f"port {port}" in seen:
                    break
        yield f"http://127.0.0.1:{port}/{'sse' if mode == 'sse' else 'mcp'}"
    finally:
        process.kill()
        with anyio.CancelScope(shield=True):
            await process.wait()


async def check_everything(supervisor: Supervisor, name: str) -> RuntimeStatus:
    status = await supervisor.wait_until(name, ready, timeout=START_TIMEOUT)
    catalog = {e.name: e for e in supervisor.catalog([name])}
    echo = await supervisor.call_tool(name, "echo", {"message": "hi"})
    total = await supervisor.call_tool(name, "get-sum", {"a": 2, "b": 3})
    resources = await supervisor.invoke(catalog[f"{name}__resources_list"])
    assert echo.text == "Echo: hi" and "5" in total.text
    assert '"resources"' in resources.text
    assert {f"{name}__echo", f"{name}__get-sum", f"{name}__prompts_get"} <= set(catalog)
    assert status.protocol_version == "2025-11-25" and status.server_name is not None
    assert status.tool_count >= 10 and catalog[f"{name}__echo"].kind is ToolKind.TOOL
    return status


async def test_server_everything_over_stdio(server_everything: StdioServer, tmp_path: Path) -> None:
    spec = McpServerSpec(command=server_everything.command, args=server_everything.args)
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("everything", spec, config_hash="h", base_dir=tmp_path)
        status = await check_everything(supervisor, "everything")
        await supervisor.remove("everything")
    assert status.pid is not None and live([status.pid]) == []


@pytest.mark.parametrize(("mode", "transport"), [("sse", "sse"), ("streamableHttp", "streamable-http")])
async def test_server_everything_over_http(
    server_everything: StdioServer, tmp_path: Path, mode: str, transport: str
) -> None:
    async with everything_over_http(server_everything, mode) as url, Supervisor(settings=FAST) as supervisor:
        spec = McpServerSpec(transport=transport, url=url, headers={"X-Clawplane": "compat"})
        await supervisor.ensure("everything", spec, config_hash="h", base_dir=tmp_path)
        status = await check_everything(supervisor, "everything")
    assert status.transport == transport


async def test_server_everything_environment_is_minimal(
    server_everything: StdioServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = McpServerSpec(
        command=server_everything.command,
        args=server_everything.args,
        env={"CLAWPLANE_VISIBLE": "yes"},
    )
    monkeypatch.setenv("CLAWPLANE_INVISIBLE", "no")
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("everything", spec, config_hash="h", base_dir=tmp_path)
        await supervisor.wait_until("everything", ready, timeout=START_TIMEOUT)
        env = await supervisor.call_tool("everything", "get-env", {})
    assert "CLAWPLANE_VISIBLE" in env.text and "CLAWPLANE_INVISIBLE" not in env.text
