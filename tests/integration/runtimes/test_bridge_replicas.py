"""Two ``clawplane bridge`` replicas of one stateful server behind a spreading front (a Service).

The front stands for a Kubernetes Service without affinity, and is harsher than one: it sends
each request to the next live replica in turn, so every other request of a session lands on the
replica that does not hold it. The replicas listen on 127.0.0.2 and 127.0.0.3 (same port, as pods
do) and know each other with ``--peer``. ``counter_server`` counts calls per process, and with
``perClient`` sessions a process is a session: a count that skips or restarts is a session whose
calls reached the wrong replica.
"""

from __future__ import annotations

import contextlib
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import psutil
import pytest
import typer
from mcp.shared.exceptions import MCPError
from starlette.types import Receive, Scope, Send
from tests.fixtures.servers.helpers import TOKEN, authed, bridge_process, script

from clawplane.cli.bridge import _address
from clawplane.runtimes.proxy import bind
from clawplane.runtimes.proxy.listener import serve_app
from clawplane.runtimes.proxy.replicas import PeerSet, replica_tag

CALLS = 100
HOSTS = ("127.0.0.2", "127.0.0.3")


def shared_port() -> int:
    """A port free on both replica addresses."""
    with socket.socket() as s:
        s.bind((HOSTS[0], 0))
        return int(s.getsockname()[1])


class SpreadingFront:
    """Round-robin HTTP forwarding over the live replicas; a replica refusing connections is dropped."""

    def __init__(self, backends: list[str]) -> None:
        self.backends = list(backends)
        self.turn = 0
        self.sent: dict[str, int] = dict.fromkeys(backends, 0)
        self.client = httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=None))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(k, v) for k, v in scope["headers"] if k not in (b"content-length", b"connection")]
        while self.backends:
            backend = self.backends[self.turn % len(self.backends)]
            self.turn += 1
            query = scope["query_string"].decode()
            url = f"http://{backend}{scope['path']}" + (f"?{query}" if query else "")
            request = self.client.build_request(scope["method"], url, headers=headers, content=body)
            try:
                response = await self.client.send(request, stream=True)
            except httpx2.ConnectError:
                self.backends.remove(backend)  # the endpoint leaves the Service
                continue
            self.sent[backend] += 1
            try:
                out = [
                    (k, v)
                    for k, v in response.headers.raw
                    if k.lower() not in (b"transfer-encoding", b"connection")
                ]
                await send({"type": "http.response.start", "status": response.status_code, "headers": out})
                with contextlib.suppress(httpx2.TransportError):
                    async for chunk in response.aiter_raw():
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            finally:
                await response.aclose()
            return
        await send({"type": "http.response.start", "status": 503, "headers": []})
        await send({"type": "http.response.body", "body": b"no replica"})


@contextlib.asynccontextmanager
async def replicas(*child: str) -> AsyncIterator[tuple[list[Any], SpreadingFront, str]]:
    """Two bridges of ``child`` (default: the counter) behind a ``SpreadingFront``; yields its MCP URL."""
    port = shared_port()
    child = child or (sys.executable, "-S", script("counter"))
    a_args = ("--host", HOSTS[0], "--port", str(port), "--peer", f"{HOSTS[1]}:{port}", "--name", "counter")
    b_args = ("--host", HOSTS[1], "--port", str(port), "--peer", f"{HOSTS[0]}:{port}", "--name", "counter")
    async with (
        bridge_process(*child, args=a_args) as (a, _a_url),
        bridge_process(*child, args=b_args) as (b, _b_url),
    ):
        front = SpreadingFront([f"{HOSTS[0]}:{port}", f"{HOSTS[1]}:{port}"])
        async with serve_app(front, bind("127.0.0.1", 0)) as endpoint:
            try:
                yield [a, b], front, f"{endpoint.base_url}/mcp"
            finally:
                await front.client.aclose()


def text(result: Any) -> str:
    return str(result.content[0].text)


def bridge_of(pid: int, bridges: list[Any]) -> Any:
    """The bridge process whose child is the server process ``pid``."""
    parent = psutil.Process(pid).ppid()
    return next(b for b in bridges if b.pid == parent)


@pytest.mark.anyio
async def test_two_sessions_stay_on_their_replicas_and_a_lost_replica_means_404_then_a_new_session() -> None:
    async with replicas() as (bridges, front, url):
        async with authed(url, mode="legacy") as one, authed(url, mode="legacy") as two:
            pids = [int(text(await one.call_tool("pid", {}))), int(text(await two.call_tool("pid", {})))]
            homes = [bridge_of(pid, bridges) for pid in pids]
            assert homes[0] is not homes[1], "round robin puts the two initializes on different replicas"
            counts: tuple[list[int], list[int]] = ([], [])
            for _ in range(CALLS):
                counts[0].append(int(text(await one.call_tool("next", {}))))
                counts[1].append(int(text(await two.call_tool("next", {}))))
            # Each session's state is consistent: its own process counted every call, in order.
            assert counts[0] == list(range(1, CALLS + 1)) and counts[1] == list(range(1, CALLS + 1))
            assert int(text(await one.call_tool("pid", {}))) == pids[0]
            assert int(text(await two.call_tool("pid", {}))) == pids[1]
            assert min(front.sent.values()) > CALLS, "the front spread the requests over both replicas"

            # The replica holding session two goes away (kill -9: no goodbye to anyone).
            gone = homes[1]
            gone.kill()
            with anyio.fail_after(30):
                await gone.wait()
            with pytest.raises(MCPError) as lost:
                await two.call_tool("next", {})
            # Session one, on the surviving replica, goes on counting.
            assert int(text(await one.call_tool("next", {}))) == CALLS + 1
        # What the client saw on the wire: the MCP spec's 404 for an unknown session.
        assert "Session" in str(lost.value) or "404" in str(lost.value), str(lost.value)
        # A clean re-initialise: a new session on the surviving replica, with fresh state.
        async with authed(url, mode="legacy") as again:
            assert [int(text(await again.call_tool("next", {}))) for _ in range(3)] == [1, 2, 3]
            assert bridge_of(int(text(await again.call_tool("pid", {}))), bridges) is homes[0]


@pytest.mark.anyio
async def test_a_session_tagged_by_a_gone_or_unknown_replica_is_404_session_not_found() -> None:
    async with replicas() as (bridges, front, _url):
        port = int(next(iter(front.sent)).split(":")[1])
        gone, survivor = bridges
        gone.kill()
        with anyio.fail_after(30):
            await gone.wait()
        headers = {
            "Authorization": f"Bearer {TOKEN}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        async with httpx2.AsyncClient() as http:

            async def ask(session_id: str) -> httpx2.Response:
                return await http.post(
                    f"http://{HOSTS[1]}:{port}/mcp",
                    headers={**headers, "Mcp-Session-Id": session_id},
                    json=listing,
                )

            # Tagged by the replica that is gone: its peer is unreachable.
            lost = await ask(f"{replica_tag(HOSTS[0], port)}.{'0' * 32}")
            # A tag no known replica has is never turned into an address to connect to.
            forged = await ask(f"{replica_tag('10.0.0.9', port)}.x")
            untagged = await ask("0" * 32)
            # The survivor's own tag with an id it never issued: the proxy's own 404.
            unknown = await ask(f"{replica_tag(HOSTS[1], port)}.{'0' * 32}")
        assert survivor.returncode is None
    for answer in (lost, forged, untagged, unknown):
        assert answer.status_code == 404, answer.text
        assert "Session not found" in answer.json()["error"]["message"]
    assert "initialize a new session" in lost.json()["error"]["message"]


@pytest.mark.anyio
async def test_stateless_2026_07_28_traffic_spreads_over_both_replicas() -> None:
    # The SDK fixture speaks 2026-07-28 (the counter only the handshake era).
    async with replicas(sys.executable, script("normal")) as (bridges, front, url):
        served_by = set()
        async with authed(url, mode="auto") as client:
            for call in range(6):
                front.turn = call  # a call may take several exchanges: start each on another replica
                served_by.add(bridge_of(int(text(await client.call_tool("pid", {}))), bridges).pid)
        # No session to keep: each exchange was served where the front sent it, never forwarded.
        assert served_by == {b.pid for b in bridges}
        assert all(count >= 3 for count in front.sent.values())


@pytest.mark.anyio
async def test_peers_from_dns_are_the_names_addresses_and_nothing_else() -> None:
    # What --peers-dns does with a headless Service's name, here with a name every machine resolves.
    peers = PeerSet(port=8080, dns_name="localhost")
    assert await peers.lookup(replica_tag("127.0.0.1", 8080)) == ("127.0.0.1", 8080)
    assert await peers.lookup(replica_tag("127.0.0.1", 8081)) is None
    assert (
        await PeerSet(port=8080, dns_name="no-such-name.invalid").lookup(replica_tag("10.0.0.1", 8080))
        is None
    )


def test_replica_addresses_parse_ipv4_ipv6_and_refuse_a_missing_port() -> None:
    assert _address("10.1.2.3", 8080, "--advertise") == ("10.1.2.3", 8080)
    assert _address("fd00::7", 8080, "--advertise") == ("fd00::7", 8080)  # $(POD_IP) on an IPv6 cluster
    assert _address("[fd00::7]:9000", None, "--peer") == ("fd00::7", 9000)
    with pytest.raises(typer.Exit):
        _address("10.1.2.3", None, "--peer")
    assert replica_tag("FD00::7", 8080) == replica_tag("[fd00::7]", 8080)
