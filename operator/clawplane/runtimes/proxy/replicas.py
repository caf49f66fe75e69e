"""Several bridge replicas behind one Service: a client session stays on the replica that holds it.

Handshake-era sessions live in one replica's memory (and its server processes), while the
Service in front spreads requests over the replicas. So every replica is also a router:

- Each replica has a *tag*, the first 12 hex digits of the SHA-256 of its advertised
  ``host:port``. The ``Mcp-Session-Id`` it hands out is ``<tag>.<id>``.
- A request carrying ``<own tag>.<id>`` is served here (with the inner id). One carrying a
  peer's tag is forwarded, as it came (same Host, token and body, responses streamed back,
  SSE included), to that peer — found among the known peers (``--peer`` addresses, or the
  A/AAAA records of a headless Service), never at an address the client chose. A request a
  peer forwarded is never forwarded again.
- When the tag names no live replica (the pod is gone, or refuses connections) the answer
  is the MCP spec's ``404 Session not found``: the client starts a new session with
  ``initialize``, which any replica admits. What that session held (per-client server
  state) died with the replica.
- Requests without a session (``initialize``, 2026-07-28 exchanges) are served by whichever
  replica the Service picked: stateless traffic spreads freely.
"""

from __future__ import annotations

import hashlib
import logging
import math
import socket
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import anyio
import httpx2
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clawplane.runtimes.proxy.guard import reply

__all__ = ["FORWARDED_HEADER", "PeerSet", "ReplicaRouter", "replica_tag"]

logger = logging.getLogger(__name__)

SESSION_HEADER = b"mcp-session-id"
FORWARDED_HEADER = b"x-clawplane-forwarded-by"
_HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"transfer-encoding", b"upgrade"}
)
_REFRESH_SECONDS = 1.0
"""A missing tag re-resolves the peers at most this often (a new pod's name shows up in DNS)."""


def replica_tag(host: str, port: int) -> str:
    """The session-id prefix of the replica advertised at ``host:port``."""
    return hashlib.sha256(f"{host.strip('[]').lower()}:{port}".encode()).hexdigest()[:12]


@dataclass
class PeerSet:
    """The replicas a request may be forwarded to: static addresses and/or a DNS name's records."""

    port: int
    static: Sequence[tuple[str, int]] = ()
    dns_name: str | None = None
    _by_tag: dict[str, tuple[str, int]] = field(default_factory=dict)
    _resolved_at: float = -math.inf

    async def _resolve(self) -> None:
        found = {replica_tag(h, p): (h, p) for h, p in self.static}
        if self.dns_name:
            try:
                infos = await anyio.getaddrinfo(self.dns_name, self.port, type=socket.SOCK_STREAM)
            except OSError as exc:
                logger.warning("replica peers: cannot resolve %s: %s", self.dns_name, exc)
                infos = []
            for info in infos:
                host = str(info[4][0])
                found[replica_tag(host, self.port)] = (host, self.port)
        self._by_tag = found
        self._resolved_at = time.monotonic()

    async def lookup(self, tag: str) -> tuple[str, int] | None:
        """The address of the replica tagged ``tag``, or None when no known replica has it."""
        if tag not in self._by_tag and time.monotonic() - self._resolved_at >= _REFRESH_SECONDS:
            await self._resolve()
        return self._by_tag.get(tag)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _gone(message: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}


class ReplicaRouter:
    """ASGI middleware in front of one replica's proxy app (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, tag: str, peers: PeerSet) -> None:
        self.app, self.tag, self.peers = app, tag, peers
        self._client = httpx2.AsyncClient(timeout=httpx2.Timeout(10.0, read=None), follow_redirects=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = _header(scope, SESSION_HEADER)
        if session is None:
            await self.app(scope, receive, self._tagging(send))
            return
        tag, dot, inner = session.partition(".")
        if dot and tag == self.tag:
            headers = [
                (k, inner.encode("latin-1") if k == SESSION_HEADER else v) for k, v in scope["headers"]
            ]
            await self.app({**scope, "headers": headers}, receive, self._tagging(send))
            return
        peer = await self.peers.lookup(tag) if dot and _header(scope, FORWARDED_HEADER) is None else None
        if peer is None:
            await reply(
                send,
                404,
                _gone("Session not found: the replica that held it is gone; initialize a new session"),
            )
            return
        await self._forward(peer, scope, receive, send)

    def _tagging(self, send: Send) -> Send:
        """``send`` with the session id of a response prefixed by this replica's tag."""
        prefix = f"{self.tag}.".encode()

        async def tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [
                        (k, prefix + v if k.lower() == SESSION_HEADER else v)
                        for k, v in message.get("headers", ())
                    ],
                }
            await send(message)

        return tagged

    async def _forward(self, peer: tuple[str, int], scope: Scope, receive: Receive, send: Send) -> None:
        host, port = peer
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        query = scope.get("query_string", b"").decode("latin-1")
        url = f"http://{authority}{scope.get('raw_path', b'').decode('latin-1') or scope['path']}"
        url += f"?{query}" if query else ""
        headers = [(k, v) for k, v in scope["headers"] if k not in _HOP_BY_HOP and k != b"content-length"]
        headers.append((FORWARDED_HEADER, self.tag.encode()))
        disconnected = anyio.Event()

        async def body() -> AsyncIterator[bytes]:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    disconnected.set()
                    return
                chunk = message.get("body", b"")
                if chunk:
                    yield chunk
                if not message.get("more_body", False):
                    return

        request = self._client.build_request(scope["method"], url, headers=headers, content=body())
        try:
            response = await self._client.send(request, stream=True)
        except httpx2.TransportError as exc:
            logger.info("replica %s:%s is unreachable (%s): its sessions are gone", host, port, exc)
            await reply(
                send,
                404,
                _gone("Session not found: the replica that held it is gone; initialize a new session"),
            )
            return
        try:
            out = [(k, v) for k, v in response.headers.raw if k.lower() not in _HOP_BY_HOP]
            await send({"type": "http.response.start", "status": response.status_code, "headers": out})
            async with anyio.create_task_group() as tg:

                async def watch() -> None:
                    # The client hanging up (an SSE stream it closed) ends the forwarded stream too.
                    while not disconnected.is_set():
                        if (await receive())["type"] == "http.disconnect":
                            break
                    tg.cancel_scope.cancel()

                tg.start_soon(watch)
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                tg.cancel_scope.cancel()
        except (httpx2.TransportError, OSError) as exc:
            logger.info("forwarding to replica %s:%s ended: %s", host, port, exc)
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close the connections to the peers."""
        await self._client.aclose()
