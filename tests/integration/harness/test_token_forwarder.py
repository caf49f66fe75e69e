"""The test-side token forwarder adds the bearer token and is otherwise invisible."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from tests.fixtures.servers.helpers import START_TIMEOUT, http_fixture
from tests.support.conformance import fixture_http, probe_resumption
from tests.support.forwarder import listen_loopback, token_forwarder

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "forwarder-test", "version": "1"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.mark.anyio
async def test_forwarder_adds_the_token_to_every_request() -> None:
    async with http_fixture("normal", "streamable-http") as url:
        with token_forwarder(url, "s3cret-token") as fwd:

            def call() -> str:
                async def go() -> str:
                    async with Client(fwd.url, read_timeout_seconds=START_TIMEOUT) as c:
                        result = await c.call_tool("header", {"name": "authorization"})
                        return str(result.content[0].text)  # type: ignore[union-attr]

                return anyio.run(go)

            # The forwarder's loop is in its own thread; the client gets its own too.
            seen = await anyio.to_thread.run_sync(call)
    assert seen == "Bearer s3cret-token"
    assert fwd.log and {f.authorization for f in fwd.log} == {"Bearer s3cret-token"}
    assert fwd.errors == []


def test_forwarder_keeps_a_foreign_host_so_the_target_still_rejects_it(tmp_path: Path) -> None:
    with fixture_http(tmp_path) as url, token_forwarder(url, "t") as fwd:
        own = fwd.url.split("/")[2]
        foreign = httpx.post(
            fwd.url,
            json=INIT,
            headers={**ACCEPT, "host": "evil.example.com", "origin": "http://evil.example.com"},
        )
        ok = httpx.post(fwd.url, json=INIT, headers={**ACCEPT, "origin": f"http://{own}"})
    assert foreign.status_code == 421  # the fixture's DNS-rebinding check answered, not the forwarder
    assert ok.status_code == 200 and "mcp-session-id" in ok.headers


def test_forwarder_streams_sse_and_resumption_unchanged(tmp_path: Path) -> None:
    with fixture_http(tmp_path) as url:
        direct = probe_resumption(url)
        with token_forwarder(url, "t") as fwd:
            forwarded = probe_resumption(fwd.url)
    for probe in (direct, forwarded):
        assert probe.priming is not None and probe.priming.retry == 500
        assert not probe.result_on_post and probe.get_status == 200
        assert probe.resumed_result is not None and probe.resumed_result["id"] == 1
    assert [(f.method, f.status) for f in fwd.log] == [
        ("POST", 200),
        ("POST", 202),
        ("POST", 200),
        ("GET", 200),
        ("DELETE", 200),
    ]


def test_forwarder_listener_gets_tcp_nodelay_on_accepted_connections() -> None:
    """asyncio sets TCP_NODELAY only on sockets created with IPPROTO_TCP; the forwarder's are."""
    listener = listen_loopback()
    accepted: list[int] = []

    async def main() -> None:
        connected = asyncio.Event()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                accepted.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                connected.set()

        server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection(*listener.getsockname())
            await asyncio.wait_for(connected.wait(), START_TIMEOUT)
            writer.close()

    asyncio.run(main())
    assert accepted == [1]


def test_forwarder_reports_an_unreachable_target() -> None:
    with socket.socket() as s:  # a port nothing listens on (bound, never listening)
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/mcp"
        with token_forwarder(dead, "t") as fwd:
            answer = httpx.post(fwd.url, json=INIT, headers=ACCEPT)
    assert answer.status_code == 502
    assert len(fwd.errors) == 1 and "ConnectError" in fwd.errors[0]
