"""Serving the proxy app on a TCP socket, embedded in an anyio program.

The socket is created with ``IPPROTO_TCP`` so asyncio sets ``TCP_NODELAY`` on every
accepted connection (with protocol 0 it silently does not, and keep-alive clients then
wait ~40 ms per request for Nagle's algorithm to meet delayed ACKs); the option is also
set on the listening socket, which Linux copies to accepted ones. uvicorn runs without
its signal handlers: the embedding program owns the signals, and its main loop wakes once a
second (for the ``Date`` header) or when told to stop, not ten times a second: an idle
supervisor stays idle.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import anyio
import anyio.abc
import uvicorn
from starlette.types import ASGIApp

from clawplane.runtimes.errors import McpRuntimeError

__all__ = ["Endpoint", "PortInUseError", "bind", "serve_app"]

logger = logging.getLogger(__name__)
_SHUTDOWN_SECONDS = 2


class PortInUseError(McpRuntimeError):
    """The requested port is taken; ``port`` says which."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(f"port {port} on {host} is already in use")
        self.host, self.port = host, port


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a listener listens."""

    host: str
    port: int

    @property
    def base_url(self) -> str:
        """``http://host:port``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def url(self, name: str | None = None) -> str:
        """The MCP URL of server ``name`` (``/mcp/<name>``), or of the default (``/mcp``)."""
        return f"{self.base_url}/mcp/{name}" if name else f"{self.base_url}/mcp"

    @property
    def health_url(self) -> str:
        """The health endpoint."""
        return f"{self.base_url}/healthz"


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket with TCP_NODELAY.

    Raises:
        PortInUseError: ``port`` is taken.
        OSError: The address cannot be bound for another reason.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortInUseError(host, port) from None
            raise
        sock.listen(256)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class _EmbeddedServer(uvicorn.Server):
    _wake: anyio.Event | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def main_loop(self) -> None:
        self._wake = anyio.Event()
        # on_tick(0) refreshes the Date header; every tick here is a second apart.
        while not await self.on_tick(0):
            with anyio.move_on_after(1.0):
                await self._wake.wait()

    def stop(self) -> None:
        """Begin the shutdown now (from the event loop's thread)."""
        self.should_exit = True
        if self._wake is not None:
            self._wake.set()


async def _run(server: uvicorn.Server, sock: socket.socket, done: anyio.Event) -> None:
    try:
        await server.serve(sockets=[sock])
    finally:
        done.set()


@contextlib.asynccontextmanager
async def serve_app(app: ASGIApp, sock: socket.socket) -> AsyncIterator[Endpoint]:
    """Serve ``app`` on the bound ``sock`` until the context exits (then close the socket)."""
    host, port = sock.getsockname()[:2]
    endpoint = Endpoint(host=str(host), port=int(port))
    config = uvicorn.Config(
        app, lifespan="off", log_level="warning", timeout_graceful_shutdown=_SHUTDOWN_SECONDS
    )
    server = _EmbeddedServer(config)
    done = anyio.Event()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_run, server, sock, done)
            try:
                yield endpoint
            finally:
                server.stop()
                with anyio.CancelScope(shield=True), anyio.move_on_after(_SHUTDOWN_SECONDS * 2):
                    await done.wait()
                tg.cancel_scope.cancel()
    finally:
        sock.close()
