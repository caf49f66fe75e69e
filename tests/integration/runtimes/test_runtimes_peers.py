"""An independent server nobody here wrote: ``mcp-server-time`` from PyPI, over stdio."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, live

from clawplane.models import McpServerSpec
from clawplane.runtimes import Phase, Supervisor, ToolKind

pytestmark = pytest.mark.anyio


@pytest.fixture
def time_server() -> McpServerSpec:
    if importlib.util.find_spec("mcp_server_time") is None:
        pytest.skip("mcp-server-time is not installed (pip install mcp-server-time; it is in the dev extra)")
    return McpServerSpec(
        command=sys.executable,
        args=["-m", "mcp_server_time", "--local-timezone", "UTC"],
        connection_timeout_ms=int(START_TIMEOUT * 1000),
    )


async def test_mcp_server_time_runs_under_the_supervisor(tmp_path: Path, time_server: McpServerSpec) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("time", time_server, config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_until("time", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
        names = [e.name for e in supervisor.catalog() if e.kind is ToolKind.TOOL]
        paris = await supervisor.call_tool("time", "get_current_time", {"timezone": "Europe/Paris"})
        bad = await supervisor.call_tool("time", "get_current_time", {"timezone": "Not/AZone"})
        await supervisor.remove("time")

    assert status.server_name == "mcp-time" and status.protocol_version == "2026-07-28"
    assert names == ["time__convert_time", "time__get_current_time"]
    assert '"timezone": "Europe/Paris"' in paris.text and not paris.is_error
    assert bad.is_error and supervisor.names() == []
    assert status.pid is not None and live([status.pid]) == []
