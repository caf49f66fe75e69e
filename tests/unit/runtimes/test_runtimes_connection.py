"""Connections to in-process servers: bounded listings, error mapping, timeouts, change following."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client._memory import InMemoryTransport
from mcp.server import MCPServer
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError

from clawplane.runtimes import ConnectTimeoutError, ListingError, RequestFailedError, RequestTimeoutError
from clawplane.runtimes.client.changes import Change, ChangeFanout
from clawplane.runtimes.client.connection import open_connection
from clawplane.runtimes.client.listing import ListLimits, Page, collect_pages

pytestmark = pytest.mark.anyio
SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def paged_server(pages: int, per_page: int, *, repeat: bool = False, description: str = "") -> Server[Any]:
    """A server whose tools/list has ``pages`` pages (cursor "1", "2", …; "1" forever if ``repeat``)."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        page = int(params.cursor) if params and params.cursor else 0
        tools = [
            types.Tool(name=f"t{page}_{i}", description=description, input_schema=SCHEMA)
            for i in range(per_page)
        ]
        nxt = "1" if repeat else (str(page + 1) if page + 1 < pages else None)
        return types.ListToolsResult(tools=tools, next_cursor=nxt)

    return Server("paged", on_list_tools=list_tools)


async def test_tools_are_collected_across_pages() -> None:
    async with open_connection(
        InMemoryTransport(paged_server(3, 4)), server="paged", connect_timeout=10, request_timeout=10
    ) as conn:
        tools = await conn.list_tools(ListLimits(timeout=10))
    assert [t.name for t in tools][:5] == ["t0_0", "t0_1", "t0_2", "t0_3", "t1_0"] and len(tools) == 12


@pytest.mark.parametrize(
    ("server", "limits", "message"),
    [
        (paged_server(5, 1), ListLimits(timeout=10, pages=4), "MCP tool listing exceeded 4 pages"),
        (paged_server(3, 5), ListLimits(timeout=10, items=12), "MCP tool listing exceeded 12 tools"),
        (
            paged_server(2, 3, description="x" * 500),
            ListLimits(timeout=10, bytes=2000),
            "exceeded 2000 bytes",
        ),
        (paged_server(3, 1, repeat=True), ListLimits(timeout=10), "returned a repeated pagination cursor"),
    ],
)
async def test_listings_are_bounded_like_openclaw(
    server: Server[Any], limits: ListLimits, message: str
) -> None:
    async with open_connection(
        InMemoryTransport(server), server="s", connect_timeout=10, request_timeout=10
    ) as conn:
        with pytest.raises(ListingError, match=message):
            await conn.list_tools(limits)


async def test_listing_deadline_covers_the_whole_listing() -> None:
    never = anyio.Event()

    async def page(cursor: str | None) -> Page[int]:
        await never.wait()
        raise AssertionError("unreachable")

    with pytest.raises(ListingError, match=r"MCP tool listing timed out after 50ms"):
        await collect_pages(page, ListLimits(timeout=0.05), label="MCP tool listing", item_label="tools")


def behaving_server() -> MCPServer:
    mcp = MCPServer("behaving")
    release = anyio.Event()

    @mcp.tool()
    def boom() -> str:
        raise MCPError(code=-32050, message="custom failure")

    @mcp.tool()
    async def wait() -> str:
        await release.wait()
        return "released"

    @mcp.tool()
    async def change(ctx: Context) -> str:
        await ctx.notify_tools_changed()
        await ctx.notify_prompts_changed()
        return "changed"

    return mcp


async def test_errors_and_timeouts_become_runtime_errors() -> None:
    transport = InMemoryTransport(behaving_server())
    async with open_connection(transport, server="b", connect_timeout=10, request_timeout=2) as conn:
        with pytest.raises(
            RequestFailedError, match=r"tools/call 'boom' failed: custom failure \(code -32050\)"
        ) as failed:
            await conn.call_tool("boom", None)
        with pytest.raises(RequestTimeoutError, match=r"tools/call .wait. timed out after 2s"):
            await conn.call_tool("wait", None)
        unknown = await conn.call_tool("nope", {})
    assert failed.value.code == -32050
    assert unknown.is_error


async def test_follow_changes_publishes_listen_events() -> None:
    fanout = ChangeFanout()
    seen: list[Change] = []
    got = anyio.Event()

    def listener(change: Change) -> None:
        seen.append(change)
        if len(seen) >= 2:
            got.set()

    fanout.subscribe(listener)
    transport = InMemoryTransport(behaving_server())
    async with (
        open_connection(transport, server="b", connect_timeout=10, request_timeout=10, fanout=fanout) as conn,
        anyio.create_task_group() as tg,
    ):
        assert conn.protocol_version == "2026-07-28"
        subscribed = anyio.Event()
        tg.start_soon(conn.follow_changes, subscribed)
        with anyio.fail_after(10):
            await subscribed.wait()
        await conn.call_tool("change", None)
        with anyio.fail_after(10):
            await got.wait()
        tg.cancel_scope.cancel()
    assert set(seen) == {Change.TOOLS, Change.PROMPTS}


async def test_a_handshake_that_never_ends_times_out() -> None:
    mcp = MCPServer("hang")

    async def hang(ctx: Any, call_next: Any) -> Any:
        if ctx.method in ("initialize", "server/discover"):
            await anyio.sleep_forever()
        return await call_next(ctx)

    mcp._lowlevel_server.middleware.insert(0, hang)
    with pytest.raises(
        ConnectTimeoutError, match=r'MCP server "hang" timed out: did not complete initialize within 0.2s'
    ):
        async with open_connection(
            InMemoryTransport(mcp), server="hang", connect_timeout=0.2, request_timeout=10
        ):
            raise AssertionError("connected")
