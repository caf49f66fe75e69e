"""A loopback HTTP reverse proxy that adds ``Authorization: Bearer <token>`` to every request.

The MCP conformance suite cannot send headers, but clawplane's hosted endpoint and bridge require
a token. ``token_forwarder(target_url, token)`` runs this proxy on a free 127.0.0.1 port (in a
thread, with its own event loop) and yields the URL to point the suite at instead.

It must be invisible apart from the token, or it would change what the suite measures:
- every method is forwarded (POST, GET, DELETE, …) with its body and headers unchanged, including
  ``Mcp-Session-Id``, ``Last-Event-ID``, ``MCP-Protocol-Version``, ``Accept``;
- ``Host`` and ``Origin`` that name the forwarder are rewritten to name the target, and any other
  value is passed unchanged, so the target's own DNS-rebinding check still sees a foreign Host;
- responses are streamed chunk by chunk as they arrive (SSE is never buffered), with status and
  headers unchanged; a client that hangs up closes the upstream response too;
- TCP_NODELAY on both sides, so small SSE events and keep-alive requests are not held by Nagle.
Hop-by-hop headers (RFC 9110 §7.6.1) are the only ones dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import uvicorn

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}
)
NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
STOP_TIMEOUT = 10.0
"""Seconds to wait for the forwarder thread to finish after it was asked to stop."""


@dataclass
class Forwarded:
    """One request the forwarder passed on, and the status the target answered."""

    method: str
    path: str
    status: int
    authorization: str | None


@dataclass
class TokenForwarder:
    """The running forwarder: ``url`` to use instead of the target, and what it forwarded."""

    url: str
    target: str
    log: list[Forwarded] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _authority(url: str) -> str:
    parts = urlsplit(url)
    if parts.hostname is None or parts.port is None:
        raise ValueError(f"forwarder target needs an explicit host and port: {url!r}")
    return parts.netloc


class _App:
    """The ASGI app: one upstream request per downstream request, streamed both ways."""

    def __init__(self, state: TokenForwarder, token: str, own: set[str], lock: threading.Lock) -> None:
        self.state = state
        self.token = token
        self.own = own  # authorities that name the forwarder itself
        self.target_authority = _authority(state.target)
        self.target_base = f"{urlsplit(state.target).scheme}://{self.target_authority}"
        self.lock = lock
        self.client: httpx.AsyncClient | None = None

    def _headers(self, raw: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for name_b, value_b in raw:
            name, value = name_b.decode("latin-1").lower(), value_b.decode("latin-1")
            if name in HOP_BY_HOP or name in ("authorization", "content-length"):
                continue
            if name == "host" and value in self.own:
                value = self.target_authority
            elif name == "origin" and urlsplit(value).netloc in self.own:
                value = f"{urlsplit(value).scheme}://{self.target_authority}"
            out.append((name, value))
        out.append(("authorization", f"Bearer {self.token}"))
        return out

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                event = (await receive())["type"]
                if event == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif event == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = self._headers(scope["headers"])
        target = self.target_base + scope["raw_path"].decode("latin-1")
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        assert self.client is not None
        request = self.client.build_request(scope["method"], target, content=body)
        request.headers = httpx.Headers(headers)  # exactly the client's headers, not httpx's defaults
        if body:
            request.headers["content-length"] = str(len(body))
        try:
            upstream = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            self._record(scope, 502, headers, f"{scope['method']} {target}: {exc!r}")
            await send({"type": "http.response.start", "status": 502, "headers": []})
            await send({"type": "http.response.body", "body": f"forwarder: {exc!r}".encode()})
            return
        self._record(scope, upstream.status_code, headers, None)
        try:
            await self._relay(upstream, receive, send)
        finally:
            await upstream.aclose()

    async def _relay(self, upstream: httpx.Response, receive: Any, send: Any) -> None:
        response_headers = [
            (k.encode("latin-1"), v.encode("latin-1"))
            for k, v in upstream.headers.multi_items()
            if k.lower() not in HOP_BY_HOP
        ]
        await send(
            {"type": "http.response.start", "status": upstream.status_code, "headers": response_headers}
        )
        async with anyio.create_task_group() as tg:

            async def hang_up_watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()  # the client left: stop reading upstream

            tg.start_soon(hang_up_watch)
            try:
                async for chunk in upstream.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
            except (httpx.HTTPError, OSError):
                pass  # upstream closed mid-stream: end ours the same way
            tg.cancel_scope.cancel()

    def _record(
        self, scope: dict[str, Any], status: int, headers: list[tuple[str, str]], error: str | None
    ) -> None:
        auth = next((v for k, v in headers if k == "authorization"), None)
        with self.lock:
            self.state.log.append(Forwarded(scope["method"], scope["path"], status, auth))
            if error:
                self.state.errors.append(error)


def listen_loopback() -> socket.socket:
    """A listening socket on a free 127.0.0.1 port whose accepted connections get TCP_NODELAY."""
    # IPPROTO_TCP (not 0): asyncio only sets TCP_NODELAY on accepted sockets of that protocol.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


@contextlib.contextmanager
def token_forwarder(target_url: str, token: str) -> Iterator[TokenForwarder]:
    """Run a forwarder to ``target_url`` (e.g. ``http://127.0.0.1:8123/mcp``) adding the token.

    Yields a ``TokenForwarder`` whose ``url`` has the target's path on the forwarder's port. The
    socket listens before this yields, so a client may connect at once (the kernel queues it).
    """
    sock = listen_loopback()
    port = sock.getsockname()[1]
    path = urlsplit(target_url).path or "/"
    state = TokenForwarder(url=f"http://127.0.0.1:{port}{path}", target=target_url)
    own = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    app = _App(state, token, own, threading.Lock())
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1, access_log=False
    )
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    async def serve() -> None:
        transport = httpx.AsyncHTTPTransport(socket_options=NODELAY, retries=0)
        timeout = httpx.Timeout(connect=10.0, read=None, write=30.0, pool=30.0)
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
        async with httpx.AsyncClient(transport=transport, timeout=timeout, limits=limits) as client:
            app.client = client
            await server.serve(sockets=[sock])

    def thread_main() -> None:
        try:
            asyncio.run(serve())
        except BaseException as exc:  # reported by the caller's thread below
            failure.append(exc)

    thread = threading.Thread(target=thread_main, name=f"token-forwarder-{port}", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.should_exit = True
        thread.join(STOP_TIMEOUT)
        sock.close()
        if thread.is_alive():
            raise RuntimeError(f"token forwarder on port {port} did not stop within {STOP_TIMEOUT} s")
        if failure:
            raise RuntimeError(f"token forwarder on port {port} failed") from failure[0]
