"""Remote runtimes (SSE, streamable HTTP) against fixture servers running as their own processes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, http_fixture

from clawplane.models import McpServerSpec
from clawplane.runtimes import EventKind, Phase, RuntimeEvent, RuntimeStatus, Supervisor, ToolKind
from clawplane.runtimes.client.connection import open_connection
from clawplane.runtimes.client.remote import HttpOptions, streamable_http_transport

pytestmark = pytest.mark.anyio

TRANSPORTS = ["sse", "streamable-http"]


def ready(status: RuntimeStatus) -> bool:
    return status.phase is Phase.READY


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_remote_server_connects_with_resolved_headers(
    tmp_path: Path, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWPLANE_TEST_API_TOKEN", "t0ken-value")
    async with http_fixture("normal", transport) as url, Supervisor(settings=FAST) as supervisor:
        spec = McpServerSpec(
            transport=transport,
            url=url,
            headers={"X-Team": "blue", "Authorization": {"valueFrom": {"env": "CLAWPLANE_TEST_API_TOKEN"}}},
        )
        await supervisor.ensure("remote", spec, config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_until("remote", ready, timeout=START_TIMEOUT)
        team = await supervisor.call_tool("remote", "header", {"name": "x-team"})
        auth = await supervisor.call_tool("remote", "header", {"name": "authorization"})
        echo = await supervisor.call_tool("remote", "echo", {"message": "over http"})
        entries = [e.name for e in supervisor.catalog() if e.kind is ToolKind.TOOL]

    assert status.transport == transport and status.pid is None and not status.hosted
    assert status.launch == url and status.tool_count == 9
    assert (team.text, auth.text, echo.text) == ("blue", "t0ken-value", "echo: over http")
    assert "remote__header" in entries


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_list_changed_over_streamable_http_in_both_eras(tmp_path: Path, era: str) -> None:
    args = ("--legacy",) if era != "2026-07-28" else ()
    async with (
        http_fixture("changing", "streamable-http", *args) as url,
        Supervisor(settings=FAST) as supervisor,
    ):
        spec = McpServerSpec(transport="streamable-http", url=url)
        await supervisor.ensure("changing", spec, config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_until("changing", ready, timeout=START_TIMEOUT)
        assert status.protocol_version == era
        await supervisor.call_tool("changing", "add_tool", {"name": "extra"})
        await supervisor.wait_until("changing", lambda s: s.tool_count == status.tool_count + 1, timeout=30)
        assert (await supervisor.call_tool("changing", "extra")).text == "extra"


async def test_list_changed_over_sse(tmp_path: Path) -> None:
    async with http_fixture("changing", "sse") as url, Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure(
            "changing", McpServerSpec(transport="sse", url=url), config_hash="h", base_dir=tmp_path
        )
        status = await supervisor.wait_until("changing", ready, timeout=START_TIMEOUT)
        await supervisor.call_tool("changing", "add_tool", {"name": "extra"})
        await supervisor.wait_until("changing", lambda s: s.tool_count == status.tool_count + 1, timeout=30)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_remote_server_hanging_on_initialize_times_out(tmp_path: Path, transport: str) -> None:
    events: list[RuntimeEvent] = []
    async with (
        http_fixture("hanging", transport) as url,
        Supervisor(settings=FAST, on_event=events.append) as supervisor,
    ):
        spec = McpServerSpec(transport=transport, url=url, connection_timeout_ms=1000)
        await supervisor.ensure("hang", spec, config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_settled("hang", timeout=START_TIMEOUT)
    assert status.phase is Phase.BACKOFF
    assert status.last_error == 'MCP server "hang" timed out: did not complete initialize within 1s'
    assert events[1].kind is EventKind.START_FAILED


async def test_unreachable_url_backs_off(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        spec = McpServerSpec(
            transport="streamable-http", url="http://127.0.0.1:9/mcp", connection_timeout_ms=5000
        )
        await supervisor.ensure("gone", spec, config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_settled("gone", timeout=START_TIMEOUT)
    assert status.phase is Phase.BACKOFF
    assert status.last_error is not None and status.last_error.startswith(
        'MCP server "gone" failed to start: '
    )


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_a_handshake_era_session_is_listening_once_connected(era: str) -> None:
    """Its standalone GET stream is answered before the connection is handed out (sse-retry of
    the conformance suite depends on it); 2026-07-28 has no such stream and does not wait."""
    args = ("--legacy",) if era != "2026-07-28" else ()
    async with http_fixture("normal", "streamable-http", *args) as url:
        transport = streamable_http_transport(url, HttpOptions(headers={}, connect_timeout=START_TIMEOUT))
        async with open_connection(
            transport, server="normal", connect_timeout=START_TIMEOUT, request_timeout=START_TIMEOUT
        ) as conn:
            listening = transport.listening
            version = conn.protocol_version
    assert (version, listening) == (era, era != "2026-07-28")
