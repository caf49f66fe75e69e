"""Client input across eras (MRTR bridging) on the hosted endpoint, with real servers and clients.

A handshake-era server (the asking fixture, SDK server with ``--legacy``) asks for input mid-call
with ``elicitation/create``, ``sampling/createMessage`` or ``roots/list``. A 2026-07-28 client (the
SDK's, ``mode="auto"``) gets each as an ``InputRequiredResult`` and retries with its answer,
which reaches the server as the response to its request; a handshake-era client on the same
endpoint gets the server's requests as they are. Raw HTTP shows the wire: the question, a
retry without the answer (asked again), a ``requestState`` that is not ours to resume.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, TOKEN, authed, guard, script, stdio_spec
from tests.support.patience import CONDITION_S

from clawplane.runtimes import Phase, Supervisor
from clawplane.runtimes.proxy.channel import StdioChannel
from clawplane.runtimes.proxy.eras.inputs import InputRequiredError, Parked, Parking
from clawplane.runtimes.proxy.mux import Mux

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


async def answer_form(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams)
    return types.ElicitResult(action="accept", content={"ok": params.message.startswith("really")})


async def answer_sampling(ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    prompt = params.messages[0].content
    text = prompt.text if isinstance(prompt, types.TextContent) else "?"
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=text.upper()),
                                     model="test")  # fmt: skip


async def answer_roots(ctx: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent), result
    return block.text


async def _asking(supervisor: Supervisor, tmp_path: Path) -> str:
    spec = stdio_spec("asking", "--sdk", "--legacy")
    await supervisor.ensure("asking", spec, config_hash="h", base_dir=tmp_path)
    await supervisor.wait_until("asking", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
    assert supervisor.status("asking").protocol_version == "2025-11-25"  # the server knows no other era
    return (await supervisor.expose(guard())).url("asking")


@pytest.mark.parametrize(("mode", "version"), [("auto", MODERN), ("legacy", "2025-11-25")])
async def test_a_handshake_era_servers_questions_reach_clients_of_both_eras(
    tmp_path: Path, mode: str, version: str
) -> None:
    """Elicitation, sampling, roots and two questions in one call, answered by a real SDK client of
    each era on one endpoint; the server gets each answer as the response to its request."""
    async with Supervisor(settings=FAST) as supervisor:
        url = await _asking(supervisor, tmp_path)
        async with authed(url, mode=mode, elicitation_callback=answer_form, sampling_callback=answer_sampling,
                          list_roots_callback=answer_roots) as client:  # fmt: skip
            protocol = client.protocol_version
            confirmed = await client.call_tool("confirm", {"question": "deploy?"})
            twice = await client.call_tool("confirm_twice", {"question": "deploy?"})
            sampled = await client.call_tool("ask_llm", {"prompt": "hello"})
            listed = await client.call_tool("roots", {})

    assert protocol == version
    assert _text(confirmed) == 'accept {"ok": false}'
    assert _text(twice) == 'accept {"ok": false}; accept {"ok": true}'
    assert _text(sampled) == "model said: HELLO"
    assert _text(listed) == "roots: file:///work/project"


def _headers(method: str, name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json", "MCP-Protocol-Version": MODERN, "Mcp-Method": method,
            "Mcp-Name": name}  # fmt: skip


def _call(request_id: int, capabilities: dict[str, Any], **extra: Any) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": capabilities}  # fmt: skip
    params = {"name": "confirm", "arguments": {"question": "ship it?"}, "_meta": meta, **extra}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_the_wire_of_a_bridged_question(tmp_path: Path) -> None:
    """The question is an ``InputRequiredResult`` under the request's id; a retry without the answer
    is asked again; the answer resumes the call, under the retry's id; a used ``requestState`` is
    refused with what to do; a client that declared no elicitation is not asked: the server hears
    why and answers the call accordingly."""
    asks = {"elicitation": {}}
    async with Supervisor(settings=FAST) as supervisor:
        url = await _asking(supervisor, tmp_path)
        async with httpx.AsyncClient(timeout=CONDITION_S) as http:
            first = (await http.post(url, headers=_headers("tools/call", "confirm"), json=_call(1, asks))).json()
            state = first["result"]["requestState"]
            bare = (await http.post(url, headers=_headers("tools/call", "confirm"),
                                    json=_call(2, asks, requestState=state))).json()  # fmt: skip
            again = bare["result"]["requestState"]
            answer = {"elicitation": {"action": "accept", "content": {"ok": True}}}
            done = (await http.post(url, headers=_headers("tools/call", "confirm"),
                                    json=_call(3, asks, requestState=again, inputResponses=answer))).json()  # fmt: skip
            reused = await http.post(url, headers=_headers("tools/call", "confirm"),
                                     json=_call(4, asks, requestState=again, inputResponses=answer))  # fmt: skip
            unasked = await http.post(url, headers=_headers("tools/call", "confirm"), json=_call(5, {}))

    assert first["id"] == 1
    assert first["result"]["resultType"] == "input_required"
    question = first["result"]["inputRequests"]["elicitation"]
    assert question["method"] == "elicitation/create"
    assert question["params"]["message"] == "ship it?"
    assert question["params"]["requestedSchema"]["required"] == ["ok"]
    assert bare["id"] == 2 and bare["result"]["inputRequests"] == first["result"]["inputRequests"]
    assert again != state
    assert done["id"] == 3 and done["result"]["content"][0]["text"] == 'accept {"ok": true}'
    assert reused.status_code == 400 and reused.json()["id"] == 4
    assert reused.json()["error"]["code"] == -32602
    assert "call tools/call again without requestState" in reused.json()["error"]["message"]
    # The server hears why (as an SDK client without the capability answers) and fails the call so.
    assert unasked.json()["id"] == 5 and unasked.json()["error"]["code"] == -32600
    assert "did not declare the elicitation capability" in unasked.json()["error"]["message"]


# The SDK marks ping deprecated (removed in 2026-07-28); handshake-era clients still send it.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_2026_07_28_servers_input_required_results_reach_a_handshake_era_client(tmp_path: Path) -> None:
    """A server without the handshake (the modern-only fixture) behind the hosted endpoint: a real
    handshake-era SDK client initializes (answered from ``server/discover``), and each
    ``InputRequiredResult`` reaches it as the server→client request it knows; its answers go back
    with the ``requestState`` in as many rounds as the server asks. A 2026-07-28 client on the same
    endpoint gets the ``InputRequiredResult`` itself."""
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("modern", stdio_spec("modern_only"), config_hash="h", base_dir=tmp_path)
        await supervisor.wait_until("modern", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
        url = (await supervisor.expose(guard())).url("modern")
        results: dict[str, list[str]] = {}
        for mode in ("legacy", "auto"):
            async with authed(url, mode=mode, elicitation_callback=answer_form, sampling_callback=answer_sampling,
                              list_roots_callback=answer_roots) as client:  # fmt: skip
                results[client.protocol_version] = [
                    _text(await client.call_tool("confirm", {"question": "deploy?"})),
                    _text(await client.call_tool("confirm_twice", {"question": "deploy?"})),
                    _text(await client.call_tool("ask_llm", {"prompt": "hello"})),
                    _text(await client.call_tool("roots", {})),
                    (await client.list_tools()).tools[0].name,
                ]
                if mode == "legacy":  # answered by a server/discover probe (2026-07-28 has no ping)
                    await client.send_ping()

    expected = ['accept {"ok": false}', 'accept {"ok": false}; accept {"ok": true}', "model said: HELLO",
                "roots: file:///work/project", "echo"]  # fmt: skip
    assert results == {"2025-11-25": expected, MODERN: expected}


async def test_a_parked_call_nobody_resumes_is_cancelled_upstream() -> None:
    """``inputs.Parking`` over a real mux and the real asking server (no supervisor, to give the
    parked call a short life): a question parked and never answered ends its link when its time
    is up, which answers the server's request with an error and cancels the call; its
    ``requestState`` is then refused with what to do, as is one used by another consumer; a
    consumer's parked calls are bounded (a newer one ends the oldest)."""
    argv = [sys.executable, script("asking"), "--sdk", "--legacy"]
    process = await anyio.open_process(argv, stderr=None)
    try:
        assert process.stdin is not None and process.stdout is not None
        channel = StdioChannel(process.stdin, process.stdout, max_message_bytes=1 << 20, on_noise=lambda _: None)
        mux = Mux(channel, name="asking")
        async with anyio.create_task_group() as tg:
            tg.start_soon(mux.run)
            session = mux.open_link("handshake")
            init = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                    "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
            await session.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
            with anyio.fail_after(CONDITION_S):
                assert "result" in (await session.receive()).message
            await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            parking = Parking(tg, ttl=0.5)
            call = mux.open_link("call")
            await call.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                             "params": {"name": "confirm", "arguments": {"question": "ok?"}}})  # fmt: skip
            with anyio.fail_after(CONDITION_S):
                question = (await call.receive()).message
                state = parking.park(Parked(call, "alice", "tools/call", question))
                other = parking.park(Parked(mux.open_link("other"), "alice", "tools/call", question))
                with pytest.raises(InputRequiredError) as foreign:
                    parking.resume({"method": "tools/call", "params": {"requestState": other}}, "mallory")
                await call.closed.wait()  # the time is up: the link ends, the call is cancelled upstream
            with pytest.raises(InputRequiredError) as expired:
                parking.resume({"method": "tools/call", "params": {"requestState": state}}, "alice")
            left = len(parking)
            # A consumer's parked calls are bounded: a newer one ends its oldest at once.
            capped = Parking(tg, ttl=CONDITION_S, per_consumer=1)
            first, second = mux.open_link("first"), mux.open_link("second")
            capped.park(Parked(first, "bob", "tools/call", question))
            kept = capped.park(Parked(second, "bob", "tools/call", question))
            with anyio.fail_after(CONDITION_S):
                await first.closed.wait()
            resumed = capped.resume({"method": "tools/call", "params": {"requestState": kept}}, "bob")
            second_open = not second.closed.is_set()
            tg.cancel_scope.cancel()
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()

    assert question["method"] == "elicitation/create" and question["params"]["message"] == "ok?"
    assert "belongs to another client" in str(foreign.value)
    assert "call tools/call again without requestState" in str(expired.value)
    assert left == 0
    assert resumed is not None and resumed.link is second and second_open
