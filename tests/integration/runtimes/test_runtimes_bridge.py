"""The bridge: hosted stdio servers served over streamable HTTP to real MCP clients."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, http_fixture, stdio_spec

from clawplane.models import McpServerSpec
from clawplane.runtimes import Phase, RuntimeStatus, Supervisor

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]


def ready(status: RuntimeStatus) -> bool:
    return status.phase is Phase.READY


async def start(supervisor: Supervisor, name: str, spec: McpServerSpec, tmp_path: Path) -> None:
    await supervisor.ensure(name, spec, config_hash="h", base_dir=tmp_path)
    await supervisor.wait_until(name, ready, timeout=START_TIMEOUT)


@pytest.mark.parametrize("mode", MODES)
async def test_python_client_lists_and_calls_tools_through_the_bridge(tmp_path: Path, mode: str) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "normal", stdio_spec("normal"), tmp_path)
        endpoint = await supervisor.expose()
        async with Client(endpoint.url("normal"), mode=mode, read_timeout_seconds=30) as client:
            tools = await client.list_tools()
            echo = await client.call_tool("echo", {"message": "bridged"})
            resources = await client.list_resources()
            greeting = await client.read_resource("fixture://greeting")
            prompts = await client.list_prompts()
            prompt = await client.get_prompt("summarize", {"topic": "bridges"})
            info = client.server_info
            protocol = client.protocol_version

    assert protocol == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert {"echo", "add", "slow"} <= {t.name for t in tools.tools}
    assert echo.content[0].text == "echo: bridged"  # type: ignore[union-attr]
    assert [r.uri for r in resources.resources] == ["fixture://greeting"]
    assert greeting.contents[0].text == "hello from normal"  # type: ignore[union-attr]
    assert [p.name for p in prompts.prompts] == ["summarize"]
    assert prompt.messages[0].content.text == "Summarize bridges."  # type: ignore[union-attr]
    assert info is not None and info.name == "normal"


async def test_bridge_applies_the_tool_filter_and_counts_failures(tmp_path: Path) -> None:
    spec = stdio_spec("normal", tool_filter={"exclude": ["slow", "env"]})
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "filtered", spec, tmp_path)
        endpoint = await supervisor.expose()
        async with Client(endpoint.url("filtered"), read_timeout_seconds=30) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            with pytest.raises(Exception, match="Unknown tool: env"):
                await client.call_tool("env", {"name": "PATH"})
            for _ in range(3):
                with pytest.raises(Exception, match="boom"):
                    await client.call_tool("fail", {})
            with pytest.raises(Exception, match="is paused after repeated tool failures"):
                await client.call_tool("echo", {"message": "paused"})
    assert "slow" not in names and "env" not in names and "echo" in names


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_changed_from_the_child_reaches_the_http_client(tmp_path: Path, mode: str) -> None:
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "changing", stdio_spec("changing"), tmp_path)
        endpoint = await supervisor.expose()
        async with Client(endpoint.url("changing"), mode=mode, message_handler=on_message) as client:
            assert "extra" not in {t.name for t in (await client.list_tools()).tools}
            if mode == "auto":
                async with client.listen(tools_list_changed=True) as subscription:
                    await client.call_tool("add_tool", {"name": "extra"})
                    with anyio.fail_after(30):
                        event = await subscription.__anext__()
                assert type(event).__name__ == "ToolsListChanged"
            else:
                await client.call_tool("add_tool", {"name": "extra"})
                with anyio.fail_after(30):
                    await changed.wait()
            names = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("extra", {})
    assert "extra" in names and result.content[0].text == "extra"  # type: ignore[union-attr]


async def test_bridge_serves_a_restarted_server_and_reports_health(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "crashy", stdio_spec("crashing"), tmp_path)
        before = supervisor.status("crashy").restarts
        endpoint = await supervisor.expose()
        async with httpx.AsyncClient() as http:
            healthy = await http.get(endpoint.health_url)
            missing = await http.post(f"{endpoint.base_url}/mcp/nope", json={})
            async with Client(endpoint.url("crashy"), read_timeout_seconds=30) as client:
                with pytest.raises(MCPError):
                    await client.call_tool("crash", {"code": 5})
            await supervisor.wait_until(
                "crashy", lambda s: ready(s) and s.restarts == before + 1, timeout=START_TIMEOUT
            )
            async with Client(endpoint.url("crashy"), read_timeout_seconds=30) as client:
                echo = await client.call_tool("echo", {"message": "again"})
    assert healthy.status_code == 200 and healthy.json() == {"status": "ok", "servers": {"crashy": "ready"}}
    assert missing.status_code == 404
    assert echo.content[0].text == "echo: again"  # type: ignore[union-attr]


async def test_remote_servers_are_not_exposed(tmp_path: Path) -> None:
    async with http_fixture("normal", "streamable-http") as url, Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "remote", McpServerSpec(transport="streamable-http", url=url), tmp_path)
        endpoint = await supervisor.expose()
        async with httpx.AsyncClient() as http:
            response = await http.post(endpoint.url("remote"), json={})
            health: Any = (await http.get(endpoint.health_url)).json()
    assert response.status_code == 404
    assert health == {"status": "unavailable", "servers": {}}
