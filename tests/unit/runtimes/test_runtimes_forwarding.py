"""The bridge's forwarding server, in process: requests, filters, failures and re-announced changes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client._memory import InMemoryTransport
from mcp.client.session import IncomingMessage
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError

from clawplane.models.mcpserver import ToolFilter
from clawplane.runtimes import RequestFailedError, ServerUnavailableError
from clawplane.runtimes.catalog import ServerTools, build_server_tools
from clawplane.runtimes.changes import Change
from clawplane.runtimes.connection import Connection, open_connection
from clawplane.runtimes.forwarding import ForwardingServer

pytestmark = pytest.mark.anyio
T = TypeVar("T")


class FakeUpstream:
    """An Upstream over one live connection; counts guarded calls."""

    name = "up"

    def __init__(self, conn: Connection | None, tool_filter: ToolFilter | None = None) -> None:
        self.conn = conn
        self.failures = 0
        self.successes = 0
        self._tools = build_server_tools("up", "up", [], launch="x", tool_filter=tool_filter)

    @property
    def tools(self) -> ServerTools:
        return self._tools

    def require_connection(self) -> Connection:
        if self.conn is None:
            raise ServerUnavailableError('MCP server "up" is not connected (backoff)')
        return self.conn

    async def wait_connection(self, timeout: float | None = None) -> Connection:
        return self.require_connection()

    async def guard(self, call: Awaitable[T]) -> T:
        try:
            result = await call
        except RequestFailedError:
            self.failures += 1
            raise
        self.successes += 1
        return result


def upstream_server() -> MCPServer:
    mcp = MCPServer("origin", version="7.0")

    @mcp.tool()
    def echo(message: str) -> str:
        return f"echo: {message}"

    @mcp.tool()
    def hidden() -> str:
        return "should not be reachable"

    @mcp.tool()
    def boom() -> str:
        raise MCPError(code=-32050, message="broken")

    @mcp.prompt()
    def hello(name: str) -> str:
        return f"Hello {name}"

    return mcp


@asynccontextmanager
async def forwarding(
    tool_filter: ToolFilter | None = None,
) -> AsyncIterator[tuple[ForwardingServer, FakeUpstream]]:
    async with open_connection(
        InMemoryTransport(upstream_server()), server="up", connect_timeout=10, request_timeout=10
    ) as conn:
        upstream = FakeUpstream(conn, tool_filter)
        yield ForwardingServer("up", lambda: upstream), upstream


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_requests_are_forwarded_and_identity_mirrored(mode: str) -> None:
    async with (
        forwarding(ToolFilter(exclude=["hidden"])) as (server, upstream),
        Client(server, mode=mode) as client,
    ):
        tools = await client.list_tools()
        echo = await client.call_tool("echo", {"message": "x"})
        prompt = await client.get_prompt("hello", {"name": "bridge"})
        with pytest.raises(MCPError, match="Unknown tool: hidden"):
            await client.call_tool("hidden", {})
        with pytest.raises(MCPError, match=r"broken \(code -32050\)"):
            await client.call_tool("boom", {})
        caps = client.server_capabilities
        info = client.server_info
    assert [t.name for t in tools.tools] == ["echo", "boom"]
    assert echo.content[0].text == "echo: x"  # type: ignore[union-attr]
    assert prompt.messages[0].content.text == "Hello bridge"  # type: ignore[union-attr]
    assert (upstream.successes, upstream.failures) == (1, 1)
    assert caps.tools is not None and caps.prompts is not None and caps.resources is not None
    if mode == "legacy":
        assert caps.tools.list_changed and info is not None and (info.name, info.version) == ("origin", "7.0")


async def test_unavailable_upstream_is_a_clear_error() -> None:
    upstream = FakeUpstream(None)
    async with Client(ForwardingServer("up", lambda: upstream)) as client:
        with pytest.raises(MCPError, match=r'MCP server "up" is not connected \(backoff\)'):
            await client.call_tool("echo", {"message": "x"})


async def test_changes_are_announced_in_both_eras() -> None:
    legacy_seen = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            legacy_seen.set()

    async with (
        forwarding() as (server, _),
        Client(server, mode="legacy", message_handler=on_message) as legacy,
        Client(server) as modern,
        modern.listen(tools_list_changed=True) as subscription,
    ):
        await legacy.list_tools()  # the session is tracked once it made a request
        await server.announce(Change.PROMPTS)
        await server.announce(Change.TOOLS)
        with anyio.fail_after(10):
            await legacy_seen.wait()
            event = await subscription.__anext__()
    assert type(event).__name__ == "ToolsListChanged"
