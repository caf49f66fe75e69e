"""The hosted endpoint: stdio servers served over streamable HTTP to real MCP clients, faithfully."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, TOKEN, authed, guard, http_fixture, stdio_spec
from tests.support.patience import CONDITION_S

from clawplane.models import McpServerSpec
from clawplane.runtimes import Phase, RuntimeStatus, Supervisor
from clawplane.runtimes.proxy import Principal, RequestGuard, TokenTable

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def ready(status: RuntimeStatus) -> bool:
    return status.phase is Phase.READY


async def start(supervisor: Supervisor, name: str, spec: McpServerSpec, tmp_path: Path) -> None:
    await supervisor.ensure(name, spec, config_hash="h", base_dir=tmp_path)
    await supervisor.wait_until(name, ready, timeout=START_TIMEOUT)


@pytest.mark.parametrize("mode", MODES)
async def test_python_client_lists_and_calls_tools_through_the_endpoint(tmp_path: Path, mode: str) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "proxy", stdio_spec("proxy"), tmp_path)
        endpoint = await supervisor.expose(guard())
        async with authed(endpoint.url("proxy"), mode=mode) as client:
            tools = await client.list_tools()
            echo = await client.call_tool("echo", {"message": "bridged"})
            resources = await client.list_resources()
            greeting = await client.read_resource("fixture://greeting")
            prompt = await client.get_prompt("summarize", {"topic": "bridges"})
            info, instructions = client.server_info, client.instructions
            protocol = client.protocol_version

    assert protocol == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert {"echo", "add", "slow", "meta", "remember"} <= {t.name for t in tools.tools}
    assert echo.content[0].text == "echo: bridged"  # type: ignore[union-attr]
    assert "fixture://greeting" in [r.uri for r in resources.resources]
    assert greeting.contents[0].text == "hello from proxy"  # type: ignore[union-attr]
    assert prompt.messages[0].content.text == "Summarize bridges."  # type: ignore[union-attr]
    # Identity passes through whole: title, version and instructions, in both eras.
    assert info is not None and (info.name, info.title, info.version) == ("proxy", "Proxy Fixture", "1.0.0")
    assert instructions == "Use remember/recall to test isolation."


@pytest.mark.parametrize("mode", MODES)
async def test_request_meta_error_data_and_progress_pass_through_unchanged(tmp_path: Path, mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "proxy", stdio_spec("proxy"), tmp_path)
        endpoint = await supervisor.expose(guard())
        async with authed(endpoint.url("proxy"), mode=mode) as client:
            echoed = await client.call_tool("meta", {}, meta={"threadId": "thread-42", "custom/key": [1, 2]})
            with pytest.raises(MCPError) as failure:
                await client.call_tool("fail_with_data", {"message": "kept as is"})
            result = await client.call_tool("progress", {"steps": 3}, progress_callback=on_progress)

    meta = json.loads(echoed.content[0].text)  # type: ignore[union-attr]
    assert meta["threadId"] == "thread-42" and meta["custom/key"] == [1, 2]
    assert (failure.value.error.code, failure.value.error.message) == (-32050, "kept as is")
    assert failure.value.error.data == {"detail": "kept", "n": 7}
    assert result.content[0].text == "3 steps"  # type: ignore[union-attr]
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_capabilities_are_exactly_the_servers(tmp_path: Path) -> None:
    # The direct server first: a fixture started after a Supervisor's teardown once never
    # delivered its READY line to this (same) event loop.
    async with http_fixture("proxy", "streamable-http") as url, authed(url, mode="legacy") as direct:
        expected = direct.server_capabilities.model_dump(exclude_none=True)
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "proxy", stdio_spec("proxy"), tmp_path)
        endpoint = await supervisor.expose(guard())
        async with authed(endpoint.url("proxy"), mode="legacy") as proxied:
            assert proxied.server_capabilities.model_dump(exclude_none=True) == expected


async def test_tool_filter_hides_and_refuses_filtered_tools(tmp_path: Path) -> None:
    spec = stdio_spec("normal", tool_filter={"exclude": ["slow", "env"]})
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "filtered", spec, tmp_path)
        endpoint = await supervisor.expose(guard())
        for mode in MODES:
            async with authed(endpoint.url("filtered"), mode=mode) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                with pytest.raises(MCPError, match="Unknown tool: env"):
                    await client.call_tool("env", {"name": "PATH"})
            assert "slow" not in names and "env" not in names and "echo" in names


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_changed_from_the_server_reaches_the_http_client(tmp_path: Path, mode: str) -> None:
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "changing", stdio_spec("changing"), tmp_path)
        endpoint = await supervisor.expose(guard())
        async with authed(endpoint.url("changing"), mode=mode, message_handler=on_message) as client:
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


async def test_handshake_clients_get_a_process_each_and_see_only_their_own_state(tmp_path: Path) -> None:
    spec = stdio_spec("proxy", max_sessions=2)
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "proxy", spec, tmp_path)
        endpoint = await supervisor.expose(guard())
        primary = supervisor.status("proxy").pid
        async with (
            authed(endpoint.url("proxy"), mode="legacy") as alice,
            authed(endpoint.url("proxy"), mode="legacy") as bob,
        ):
            await alice.call_tool("remember", {"value": "alice's secret"})
            alice_pid = (await alice.call_tool("pid", {})).content[0].text  # type: ignore[union-attr]
            bob_pid = (await bob.call_tool("pid", {})).content[0].text  # type: ignore[union-attr]
            bob_memory = (await bob.call_tool("recall", {})).content[0].text  # type: ignore[union-attr]
            bob_resource = (await bob.read_resource("fixture://memory")).contents[0].text  # type: ignore[union-attr]
            alice_memory = (await alice.call_tool("recall", {})).content[0].text  # type: ignore[union-attr]
            status = supervisor.status("proxy")
            # A third client is over the limit: a clear error, and the others go on.
            async with httpx.AsyncClient(headers=AUTH) as http:
                over = await http.post(
                    endpoint.url("proxy"),
                    json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _init_params()},
                    headers={"Accept": "application/json, text/event-stream"},
                )
            still = (await alice.call_tool("echo", {"message": "ok"})).content[0].text  # type: ignore[union-attr]
        catalog = {e.tool for e in supervisor.catalog(["proxy"])}

    assert len({alice_pid, bob_pid, str(primary)}) == 3
    assert json.loads(alice_memory) == ["alice's secret"]
    assert json.loads(bob_memory) == [] and json.loads(bob_resource) == []
    assert status.sessions == 2 and len(status.session_pids) == 2
    assert over.status_code == 503
    error = over.json()["error"]
    assert error["code"] == -32011 and "already has 2 client sessions" in error["message"]
    assert "maxSessions" in error["message"]
    assert still == "echo: ok"
    assert "remember" in catalog


async def test_one_clients_new_tool_reaches_neither_another_client_nor_the_catalog(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "changing", stdio_spec("changing"), tmp_path)
        endpoint = await supervisor.expose(guard())
        async with (
            authed(endpoint.url("changing"), mode="legacy") as alice,
            authed(endpoint.url("changing"), mode="legacy") as bob,
        ):
            await alice.call_tool("add_tool", {"name": "alices_tool"})
            alice_names = {t.name for t in (await alice.list_tools()).tools}
            bob_names = {t.name for t in (await bob.list_tools()).tools}
        catalog = {e.tool for e in supervisor.catalog(["changing"])}
    assert "alices_tool" in alice_names
    assert "alices_tool" not in bob_names and "alices_tool" not in catalog


async def test_ended_sessions_stop_their_processes(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "proxy", stdio_spec("proxy"), tmp_path)
        endpoint = await supervisor.expose(guard())
        async with authed(endpoint.url("proxy"), mode="legacy") as client:
            pid = int((await client.call_tool("pid", {})).content[0].text)  # type: ignore[union-attr]
        await supervisor.wait_until("proxy", lambda s: s.sessions == 0 and not s.session_pids, timeout=30)
    import psutil

    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


async def test_idle_sessions_are_closed_after_their_ttl(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "proxy", stdio_spec("proxy", session_idle_ttl_ms=300), tmp_path)
        endpoint = await supervisor.expose(guard())
        async with httpx.AsyncClient(headers=AUTH) as http:
            opened = await _initialize(http, endpoint.url("proxy"))
            session = opened.headers["mcp-session-id"]
            # The session is counted before initialize answers; on a busy machine its 300 ms may
            # already be over by now, so only its end is awaited.
            await supervisor.wait_until("proxy", lambda s: s.sessions == 0, timeout=CONDITION_S)
            later = await http.post(
                endpoint.url("proxy"),
                json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                headers={"Accept": "application/json, text/event-stream", "Mcp-Session-Id": session},
            )
    assert later.status_code == 404


async def test_a_crash_of_a_session_process_ends_only_that_session(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "crashy", stdio_spec("crashing"), tmp_path)
        before = supervisor.status("crashy")
        endpoint = await supervisor.expose(guard())
        async with authed(endpoint.url("crashy"), mode="legacy") as client:
            with pytest.raises(MCPError, match="is gone"):
                await client.call_tool("crash", {"code": 5})
        async with authed(endpoint.url("crashy"), mode="legacy") as again:
            echo = await again.call_tool("echo", {"message": "again"})
        after = supervisor.status("crashy")
    assert echo.content[0].text == "echo: again"  # type: ignore[union-attr]
    assert (after.restarts, after.pid) == (before.restarts, before.pid)


async def test_a_crash_of_the_primary_process_is_survived_by_modern_clients(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "crashy", stdio_spec("crashing"), tmp_path)
        before = supervisor.status("crashy").restarts
        endpoint = await supervisor.expose(guard())
        async with httpx.AsyncClient(headers=AUTH) as http:
            healthy = await http.get(endpoint.health_url)
            missing = await http.post(f"{endpoint.base_url}/mcp/nope", json={})
        async with authed(endpoint.url("crashy"), mode="auto") as client:
            with pytest.raises(MCPError):
                await client.call_tool("crash", {"code": 5})
        await supervisor.wait_until("crashy", lambda s: ready(s) and s.restarts == before + 1, timeout=START_TIMEOUT)
        async with authed(endpoint.url("crashy"), mode="auto") as client:
            echo = await client.call_tool("echo", {"message": "again"})
    assert healthy.status_code == 200 and healthy.json()["servers"] == {"crashy": "ready"}
    assert missing.status_code == 404
    assert echo.content[0].text == "echo: again"  # type: ignore[union-attr]


async def test_health_names_only_the_servers_the_token_reaches(tmp_path: Path) -> None:
    narrow, agent = "clawplane_narrow-token-0123456789", "clawplane_agent-token-0123456789"
    tokens = TokenTable.of({
        TOKEN: Principal("all"),
        narrow: Principal("client:x", servers=frozenset({"one"})),
        agent: Principal("agent:coder", servers=frozenset()),
    })  # fmt: skip
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "one", stdio_spec("normal"), tmp_path)
        await start(supervisor, "two", stdio_spec("normal"), tmp_path)
        endpoint = await supervisor.expose(RequestGuard("127.0.0.1", tokens))
        async with httpx.AsyncClient() as http:
            bodies = {
                who: (await http.get(endpoint.health_url, headers=headers)).json()
                for who, headers in {
                    "all": {"Authorization": f"Bearer {TOKEN}"},
                    "narrow": {"Authorization": f"Bearer {narrow}"},
                    "agent": {"Authorization": f"Bearer {agent}"},
                    "anonymous": {},
                }.items()
            }
    assert bodies["all"]["servers"] == {"one": "ready", "two": "ready"}
    assert bodies["narrow"]["servers"] == {"one": "ready"} and set(bodies["narrow"]["sessions"]) <= {"one"}
    assert bodies["agent"]["servers"] == {} and bodies["agent"]["sessions"] == {}
    assert bodies["anonymous"] == {"status": "ok"}


async def test_remote_servers_are_not_exposed(tmp_path: Path) -> None:
    async with http_fixture("normal", "streamable-http") as url, Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "remote", McpServerSpec(transport="streamable-http", url=url), tmp_path)
        endpoint = await supervisor.expose(guard())
        async with httpx.AsyncClient(headers=AUTH) as http:
            response = await http.post(endpoint.url("remote"), json={})
            health: Any = (await http.get(endpoint.health_url)).json()
    assert response.status_code == 404
    assert health == {"status": "unavailable", "servers": {}, "sessions": {}}


def _init_params() -> dict[str, Any]:
    return {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}


async def _initialize(http: httpx.AsyncClient, url: str) -> httpx.Response:
    response = await http.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _init_params()},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 200, response.text
    return response


@pytest.mark.parametrize("legacy_only", [False, True])
async def test_shared_sessions_use_one_process_for_every_client(tmp_path: Path, legacy_only: bool) -> None:
    # A handshake-era primary is shared directly; a 2026-07-28 one (locked to its era) gets a
    # second long-lived process for the handshake-era clients.
    args = ("--legacy",) if legacy_only else ()
    spec = stdio_spec("proxy", *args, sessions="shared")
    async with Supervisor(settings=FAST) as supervisor:
        await start(supervisor, "proxy", spec, tmp_path)
        primary = supervisor.status("proxy").pid
        endpoint = await supervisor.expose(guard())
        async with (
            authed(endpoint.url("proxy"), mode="legacy") as alice,
            authed(endpoint.url("proxy"), mode="legacy") as bob,
        ):
            await alice.call_tool("remember", {"value": "shared"})
            alice_pid = (await alice.call_tool("pid", {})).content[0].text  # type: ignore[union-attr]
            bob_pid = (await bob.call_tool("pid", {})).content[0].text  # type: ignore[union-attr]
            bob_memory = (await bob.call_tool("recall", {})).content[0].text  # type: ignore[union-attr]
    assert alice_pid == bob_pid
    assert (alice_pid == str(primary)) is legacy_only
    assert json.loads(bob_memory) == ["shared"]
