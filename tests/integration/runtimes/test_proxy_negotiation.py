"""2026-07-28 on the hosted endpoint: version negotiation, removed methods, listen streams by id value.

A real stdio fixture behind a real supervisor's endpoint, spoken to in raw HTTP because these
are the requests an SDK client never makes (an unknown version, ``initialize`` under the new
revision, a server that echoes ids as strings).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, TOKEN, guard, stdio_spec
from tests.support.patience import CONDITION_S

from clawplane.runtimes import Phase, Supervisor

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}


def _headers(version: str, method: str, name: str | None = None) -> dict[str, str]:
    out = {
        "Authorization": f"Bearer {TOKEN}",
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": version,
        "Mcp-Method": method,
    }
    if name is not None:
        out["Mcp-Name"] = name
    return out


def _request(request_id: Any, method: str, version: str = MODERN, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method,
            "params": {**params, "_meta": {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": version}}}  # fmt: skip


async def _endpoint(supervisor: Supervisor, name: str, fixture: str, tmp_path: Path, *args: str) -> str:
    await supervisor.ensure(name, stdio_spec(fixture, *args), config_hash="h", base_dir=tmp_path)
    await supervisor.wait_until(name, lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
    return (await supervisor.expose(guard())).url(name)


async def test_an_unknown_version_gets_unsupported_protocol_version_with_the_request_id(tmp_path: Path) -> None:
    """Any ``MCP-Protocol-Version`` outside the handshake era is routed as 2026-07-28: an unknown one
    is refused with -32022 naming what is served and what was asked, under the request's own id,
    whatever that id's type; a header that disagrees with the body is -32020; no session is opened."""
    async with Supervisor(settings=FAST) as supervisor:
        url = await _endpoint(supervisor, "notes", "normal", tmp_path)
        async with httpx.AsyncClient(timeout=CONDITION_S) as http:
            unknown = await http.post(url, headers=_headers("v999.0.0", "server/discover"),
                                      json=_request(301, "server/discover", "v999.0.0"))  # fmt: skip
            unknown_str = await http.post(url, headers=_headers("1999-01-01", "tools/list"),
                                          json=_request("abc", "tools/list", "1999-01-01"))  # fmt: skip
            mismatch = await http.post(url, headers=_headers(MODERN, "server/discover"),
                                       json=_request(302, "server/discover", "v999.0.0"))  # fmt: skip
            served = await http.post(url, headers=_headers(MODERN, "server/discover"),
                                     json=_request(303, "server/discover"))  # fmt: skip
        sessions = supervisor.status("notes").sessions

    for response, request_id, requested in ((unknown, 301, "v999.0.0"), (unknown_str, "abc", "1999-01-01")):
        assert response.status_code == 400, response.text
        body = response.json()
        assert body["id"] == request_id
        assert body["error"]["code"] == -32022
        assert body["error"]["data"] == {"supported": [MODERN], "requested": requested}
        assert "mcp-session-id" not in response.headers
    assert mismatch.status_code == 400 and mismatch.json()["id"] == 302
    assert mismatch.json()["error"]["code"] == -32020
    assert served.status_code == 200 and MODERN in served.json()["result"]["supportedVersions"]
    assert sessions == 0


async def test_initialize_under_the_new_revision_is_method_not_found(tmp_path: Path) -> None:
    """``initialize`` was removed in 2026-07-28: 404 with -32601, as the SDK's HTTP server answers
    (over stdio the server would take it for a handshake); the handshake itself still works."""
    async with Supervisor(settings=FAST) as supervisor:
        url = await _endpoint(supervisor, "notes", "normal", tmp_path)
        async with httpx.AsyncClient(timeout=CONDITION_S) as http:
            removed = await http.post(url, headers=_headers(MODERN, "initialize"), json=_request(500, "initialize"))
            handshake = await http.post(
                url,
                headers={"Authorization": f"Bearer {TOKEN}", "Accept": ACCEPT},
                json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "raw", "version": "1"}}},
            )  # fmt: skip
    assert removed.status_code == 404, removed.text
    assert removed.json()["id"] == 500 and removed.json()["error"]["code"] == -32601
    assert handshake.status_code == 200 and "mcp-session-id" in handshake.headers


async def _events(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    async for line in response.aiter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


@pytest.mark.parametrize("listen_id", [41, "listen-41"])
async def test_listen_frames_reach_their_listener_when_the_server_echoes_ids_as_strings(
    tmp_path: Path, listen_id: int | str
) -> None:
    """The server names the stream by ``str(id)`` of the proxy's own upstream id; the client still
    gets the acknowledgement first, with its filter, and then the frames it asked for, each named
    by the id it sent (an integer stays an integer)."""
    wanted = {"toolsListChanged": True}
    async with Supervisor(settings=FAST) as supervisor:
        url = await _endpoint(supervisor, "strings", "string_ids", tmp_path)
        async with httpx.AsyncClient(timeout=CONDITION_S) as http:
            listen = _request(listen_id, "subscriptions/listen", notifications=wanted)
            got: list[dict[str, Any]] = []
            with anyio.fail_after(CONDITION_S):
                async with http.stream("POST", url, headers=_headers(MODERN, "subscriptions/listen"),
                                       json=listen) as stream:  # fmt: skip
                    assert stream.status_code == 200
                    async for event in _events(stream):
                        got.append(event)
                        if len(got) == 1:
                            call = _request(2, "tools/call", name="announce", arguments={})
                            answer = await http.post(url, headers=_headers(MODERN, "tools/call", "announce"),
                                                     json=call)  # fmt: skip
                            assert answer.status_code == 200, answer.text
                        else:
                            break

    acknowledged, changed = got
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert acknowledged["params"]["notifications"] == wanted
    assert acknowledged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id
    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id


async def test_a_handshake_era_server_is_discovered_and_listened_to_in_2026_07_28(tmp_path: Path) -> None:
    """A server that speaks only the handshake era (the changing fixture, ``--legacy``): the proxy
    answers ``server/discover`` from its ``initialize`` answer and ``subscriptions/listen`` with its
    list changes, as frames under the listener's id; the filter decides which."""
    wanted = {"toolsListChanged": True, "promptsListChanged": False}
    async with Supervisor(settings=FAST) as supervisor:
        url = await _endpoint(supervisor, "moving", "changing", tmp_path, "--legacy")
        async with httpx.AsyncClient(timeout=CONDITION_S) as http:
            discovered = (await http.post(url, headers=_headers(MODERN, "server/discover"),
                                          json=_request(1, "server/discover"))).json()  # fmt: skip
            got: list[dict[str, Any]] = []
            with anyio.fail_after(CONDITION_S):
                async with http.stream("POST", url, headers=_headers(MODERN, "subscriptions/listen"),
                                       json=_request(9, "subscriptions/listen", notifications=wanted)) as stream:  # fmt: skip
                    async for event in _events(stream):
                        got.append(event)
                        if len(got) > 1:
                            break
                        call = _request(2, "tools/call", name="add_tool", arguments={"name": "extra"})
                        added = await http.post(url, headers=_headers(MODERN, "tools/call", "add_tool"), json=call)
                        assert added.status_code == 200, added.text

    result = discovered["result"]
    assert discovered["id"] == 1 and result["supportedVersions"] == [MODERN]
    assert "tools" in result["capabilities"]  # its own capabilities, as its initialize gave them
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
    acknowledged, changed = got
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert acknowledged["params"] == {"_meta": {"io.modelcontextprotocol/subscriptionId": 9}, "notifications": wanted}
    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 9}
