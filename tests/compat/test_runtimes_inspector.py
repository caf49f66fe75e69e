"""``clawplane bridge`` with real clients: the MCP Inspector CLI 0.15.0 and the Python SDK client.

The bridge runs as the command the Kubernetes driver will use; behind it run our fixture
servers and ``@modelcontextprotocol/server-everything``. The Inspector CLI 0.15.0 cannot send
headers, so it reaches the bridge through the test-side token forwarder.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import IncomingMessage
from tests.fixtures.servers.helpers import TOKEN, authed, bridge_process, script
from tests.oracles.runners import OracleRunner, StdioServer
from tests.support.forwarder import token_forwarder

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def inspect(inspector: OracleRunner, url: str, *args: str) -> Any:
    """Run the inspector CLI against ``url`` (through a token forwarder) in a worker thread."""

    def run() -> Any:
        with token_forwarder(url, TOKEN) as forwarder:
            return inspector.json(forwarder.url, "--transport", "http", *args, timeout=120)

    return await anyio.to_thread.run_sync(run)


async def test_inspector_lists_and_calls_a_fixture_server_through_the_bridge(
    inspector_cli: OracleRunner,
) -> None:
    async with bridge_process(sys.executable, script("normal")) as (_, url):
        listed = await inspect(inspector_cli, url, "--method", "tools/list")
        called = await inspect(
            inspector_cli,
            url,
            "--method",
            "tools/call",
            "--tool-name",
            "add",
            "--tool-arg",
            "a=2",
            "--tool-arg",
            "b=40",
        )
        resources = await inspect(inspector_cli, url, "--method", "resources/list")
    assert {"echo", "add", "slow"} <= {tool["name"] for tool in listed["tools"]}
    assert called["content"][0]["text"] == "42" and called["isError"] is False
    assert [r["uri"] for r in resources["resources"]] == ["fixture://greeting"]


async def test_inspector_and_python_client_use_server_everything_through_the_bridge(
    inspector_cli: OracleRunner, server_everything: StdioServer
) -> None:
    async with bridge_process(*server_everything.argv, env=server_everything.env) as (_, url):
        listed = await inspect(inspector_cli, url, "--method", "tools/list")
        called = await inspect(
            inspector_cli, url, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"
        )
        prompts = await inspect(inspector_cli, url, "--method", "prompts/list")
        async with authed(url, read_timeout_seconds=60) as client:
            summed = await client.call_tool("get-sum", {"a": 1, "b": 2})
    names = {tool["name"] for tool in listed["tools"]}
    assert {"echo", "get-sum"} <= names
    assert called["content"][0]["text"] == "Echo: hi"
    assert prompts["prompts"]
    assert "3" in summed.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_list_changed_from_the_child_reaches_a_client_of_the_bridge_command(mode: str) -> None:
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with (
        bridge_process(sys.executable, script("changing")) as (_, url),
        authed(url, mode=mode, message_handler=on_message, read_timeout_seconds=60) as client,
    ):
        if mode == "auto":
            async with client.listen(tools_list_changed=True) as subscription:
                await client.call_tool("add_tool", {"name": "late"})
                with anyio.fail_after(30):
                    await subscription.__anext__()
        else:
            await client.call_tool("add_tool", {"name": "late"})
            with anyio.fail_after(30):
                await changed.wait()
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "late" in names
