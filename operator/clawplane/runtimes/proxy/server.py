"""A running proxy listener: the app, its sessions' task group and the HTTP server."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio

from clawplane.runtimes.proxy.app import ProxyApp
from clawplane.runtimes.proxy.guard import RequestGuard
from clawplane.runtimes.proxy.hosting import HostedDirectory
from clawplane.runtimes.proxy.listener import Endpoint, serve_app

__all__ = ["ProxyHandle", "serve_proxy"]


@dataclass(frozen=True, slots=True)
class ProxyHandle:
    """Where a proxy listens, and its app (for session counts)."""

    endpoint: Endpoint
    app: ProxyApp


@contextlib.asynccontextmanager
async def serve_proxy(
    directory: HostedDirectory, guard: RequestGuard, sock: socket.socket, *, default: str | None = None
) -> AsyncIterator[ProxyHandle]:
    """Serve ``directory``'s hosted servers on ``sock`` until the context exits."""
    async with anyio.create_task_group() as sessions:
        app = ProxyApp(directory, guard, sessions, default=default)
        async with serve_app(app, sock) as endpoint:
            try:
                yield ProxyHandle(endpoint, app)
            finally:
                # Ending the sessions first closes their SSE streams, so the HTTP server's
                # graceful shutdown has nothing left to wait for.
                await app.close()
                sessions.cancel_scope.cancel()
