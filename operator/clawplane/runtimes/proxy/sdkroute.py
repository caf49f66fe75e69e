"""An MCP server built with the SDK, served as a mounted route of the proxy (both protocol eras).

The SDK's ``StreamableHTTPSessionManager`` speaks streamable HTTP in both eras (handshake
sessions and 2026-07-28 requests). The proxy's guard has checked Host, Origin and the token
already, so the manager runs without its own transport security; the caller's principal is
handed to it as the authenticated user, which binds each session to the consumer that opened
it (a session id presented with another consumer's token answers 404, as the SDK does).
Streams are not resumable (no event store): a client that loses one re-sends its request.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import ASGIApp, Receive, Scope, Send

from clawplane.runtimes.proxy.app import PRINCIPAL_SCOPE_KEY
from clawplane.runtimes.proxy.guard import Principal

__all__ = ["serve_sdk_server"]


@contextlib.asynccontextmanager
async def serve_sdk_server(server: Server[Any], *, idle_ttl: float = 600.0) -> AsyncIterator[ASGIApp]:
    """An ASGI app serving ``server`` (mount it as a ``Route``) while the context is open."""
    manager = StreamableHTTPSessionManager(
        app=server, security_settings=None, session_idle_timeout=idle_ttl
    )

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get(PRINCIPAL_SCOPE_KEY)
        if isinstance(principal, Principal):
            token = AccessToken(token="", client_id=principal.consumer, scopes=sorted(principal.scopes))
            scope = {**scope, "user": AuthenticatedUser(token)}
        await manager.handle_request(scope, receive, send)

    async with manager.run():
        yield app
