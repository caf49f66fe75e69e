"""The bridge: hosted servers served to other MCP clients over streamable HTTP.

``serve(directory, host=…, port=…)`` binds one HTTP endpoint and routes
``/mcp/<name>`` to a ``ForwardingServer`` for the directory's upstream ``<name>``
(``/mcp`` goes to ``default``, which is how ``clawplane bridge`` serves its one child).
``/healthz`` answers 200 when every upstream is ready and 503 otherwise, with the phases as
JSON. Change notifications from upstreams are re-announced to connected clients.

On a loopback address, requests whose ``Host``/``Origin`` is not loopback are refused
(DNS-rebinding protection, as the SDK does); on any other address (a container behind a
Kubernetes Service) they are accepted. Uses uvicorn, so it needs anyio's asyncio backend.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import re
import socket
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import anyio.abc
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from clawplane.runtimes.changes import Change
from clawplane.runtimes.forwarding import ForwardingServer, Upstream

__all__ = ["BridgeEndpoint", "UpstreamDirectory", "serve"]

logger = logging.getLogger(__name__)

_MCP_PATH = re.compile(r"^/mcp(?:/(?P<name>[^/]+))?/?$")
_SHUTDOWN_SECONDS = 2


class UpstreamDirectory(Protocol):
    """Where the bridge finds the servers it exposes (the ``Supervisor`` is one)."""

    def upstream(self, name: str) -> Upstream | None:
        """The hosted runtime called ``name``, or None."""
        ...

    def health(self) -> Mapping[str, str]:
        """The phase of every exposed server, by name."""
        ...

    def subscribe_changes(self, listener: Callable[[str, Change], None]) -> Callable[[], None]:
        """Call ``listener(name, change)`` on every list change; returns an unsubscribe function."""
        ...


@dataclass(frozen=True, slots=True)
class BridgeEndpoint:
    """Where a running bridge listens."""

    host: str
    port: int

    @property
    def base_url(self) -> str:
        """``http://host:port``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def url(self, name: str | None = None) -> str:
        """The MCP URL of upstream ``name`` (``/mcp/<name>``), or of the default (``/mcp``)."""
        return f"{self.base_url}/mcp/{name}" if name else f"{self.base_url}/mcp"

    @property
    def health_url(self) -> str:
        """The health endpoint."""
        return f"{self.base_url}/healthz"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _security(host: str) -> TransportSecuritySettings | None:
    if not _is_loopback(host):
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


class _BridgeApp:
    """The ASGI app: routing, health, and one session manager per exposed server."""

    def __init__(
        self, directory: UpstreamDirectory, tg: anyio.abc.TaskGroup, *, host: str, default: str | None
    ) -> None:
        self._directory = directory
        self._tg = tg
        self._security = _security(host)
        self._default = default
        self._servers: dict[str, ForwardingServer] = {}
        self._managers: dict[str, StreamableHTTPSessionManager] = {}
        self._lock = anyio.Lock()

    def on_change(self, name: str, change: Change) -> None:
        server = self._servers.get(name)
        if server is not None:
            self._tg.start_soon(server.announce, change)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path = scope.get("path", "")
        if path in ("/healthz", "/health"):
            await self._health(send)
            return
        match = _MCP_PATH.match(path)
        name = (match.group("name") or self._default) if match else None
        if not name or self._directory.upstream(name) is None:
            await _respond(send, 404, {"error": f"no MCP server at {path}"})
            return
        manager = await self._manager(name)
        await manager.handle_request(scope, receive, send)

    async def _health(self, send: Send) -> None:
        phases = dict(self._directory.health())
        ok = bool(phases) and all(phase == "ready" for phase in phases.values())
        await _respond(send, 200 if ok else 503, {"status": "ok" if ok else "unavailable", "servers": phases})

    async def _manager(self, name: str) -> StreamableHTTPSessionManager:
        async with self._lock:
            manager = self._managers.get(name)
            if manager is None:
                server = ForwardingServer(name, lambda: self._directory.upstream(name))
                manager = StreamableHTTPSessionManager(app=server, security_settings=self._security)
                await self._tg.start(_run_manager, manager)
                self._servers[name] = server
                self._managers[name] = manager
            return manager


async def _run_manager(
    manager: StreamableHTTPSessionManager,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    async with manager.run():
        task_status.started()
        await anyio.sleep_forever()


async def _respond(send: Send, status: int, body: Any) -> None:
    data = json.dumps(body).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: the embedding program owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(256)
    sock.setblocking(False)
    return sock


async def _run_server(server: uvicorn.Server, sock: socket.socket, done: anyio.Event) -> None:
    try:
        await server.serve(sockets=[sock])
    finally:
        done.set()


@contextlib.asynccontextmanager
async def serve(
    directory: UpstreamDirectory, *, host: str = "127.0.0.1", port: int = 0, default: str | None = None
) -> AsyncIterator[BridgeEndpoint]:
    """Serve ``directory``'s upstreams over streamable HTTP until the context exits.

    ``port=0`` picks a free port; the endpoint says which. The socket listens before this
    yields, so clients may connect at once.

    Raises:
        OSError: The address cannot be bound.
    """
    sock = _bind(host, port)
    endpoint = BridgeEndpoint(host=host, port=sock.getsockname()[1])
    server: _EmbeddedServer | None = None
    done = anyio.Event()
    async with anyio.create_task_group() as tg:
        try:
            # Session managers get their own group: stopping them first ends the open
            # SSE streams, so uvicorn's graceful shutdown has nothing left to wait for.
            async with anyio.create_task_group() as managers:
                app = _BridgeApp(directory, managers, host=host, default=default)
                config = uvicorn.Config(
                    app, lifespan="off", log_level="warning", timeout_graceful_shutdown=_SHUTDOWN_SECONDS
                )
                server = _EmbeddedServer(config)
                tg.start_soon(_run_server, server, sock, done)
                unsubscribe = directory.subscribe_changes(app.on_change)
                try:
                    yield endpoint
                finally:
                    unsubscribe()
                    managers.cancel_scope.cancel()
        finally:
            if server is not None:
                server.should_exit = True
                with anyio.CancelScope(shield=True), anyio.move_on_after(_SHUTDOWN_SECONDS * 2):
                    await done.wait()
            tg.cancel_scope.cancel()
            sock.close()
    logger.debug("bridge on %s stopped", endpoint.base_url)
