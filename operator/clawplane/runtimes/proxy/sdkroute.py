"""An MCP server built with the SDK, served as a mounted route of the proxy (both protocol eras).

The SDK's ``StreamableHTTPSessionManager`` speaks streamable HTTP in both eras (handshake
sessions and 2026-07-28 requests). The proxy's guard has checked Host, Origin and the token
already, so the manager runs without its own transport security; the caller's principal is
handed to it as the authenticated user, which binds each session to the consumer that opened
it (a session id presented with another consumer's token answers 404, as the SDK does).
Streams are not resumable (no event store): a client that loses one re-sends its request.

Sessions are accounted by the proxy's ``ledger``, as on the hosted endpoint, not by the SDK:
a request that would open a session is admitted first (within ``maxSessions`` and the
consumer's share, ending the least-recently-used idle session to make room, else 503 with
``-32011`` and ``Retry-After``); every request holds its session in use while it is served, a
``ping`` not counting as a use; an idle session ends ``idle_ttl`` after its last use. A message whose id
cannot be routed back (an object, an array, a fraction, NaN, null) gets 400 with ``-32600``
before the SDK sees it.

The SDK goes on serving a handshake-era request whose client disconnected; the request's
``DISCONNECTED_SCOPE_KEY`` event (in its ASGI scope, which handlers see as
``ctx.request.scope``) is set when it does, so a handler can end what only that client wanted
(a tool call still held for an approval).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.abc
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import Message, Receive, Scope, Send

from clawplane.runtimes.proxy.app import PRINCIPAL_SCOPE_KEY
from clawplane.runtimes.proxy.eras.sse import invalid_id, is_ping, read_body, replay_body
from clawplane.runtimes.proxy.guard import Principal, reply
from clawplane.runtimes.proxy.hosting import SESSION_LIMIT
from clawplane.runtimes.proxy.ledger import (
    RETRY_AFTER_S,
    Seat,
    SessionLedger,
    SessionLimitError,
    SessionLimits,
)
from clawplane.telemetry import CallTelemetry, session_hooks

__all__ = ["DISCONNECTED_SCOPE_KEY", "SdkSessions", "serve_sdk_server"]

DISCONNECTED_SCOPE_KEY = "clawplane.disconnected"
"""An ``anyio.Event`` in a request's scope, set once its HTTP client has disconnected."""

logger = logging.getLogger(__name__)

_SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = b"mcp-protocol-version"


def _header(headers: Any, name: bytes) -> str | None:
    for key, value in headers or ():
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None  # the SDK answers the parse error itself


def _watched(receive: Receive, disconnected: anyio.Event) -> Receive:
    async def watched() -> Message:
        message = await receive()
        if message.get("type") == "http.disconnect":
            disconnected.set()
        return message

    return watched


def _problem(decoded: Any) -> str | None:
    if isinstance(decoded, list):
        return next((p for p in map(invalid_id, decoded) if p is not None), None)
    return invalid_id(decoded)


class SdkSessions:
    """The handshake-era sessions of one SDK server, admitted and ended by a ``SessionLedger``."""

    def __init__(
        self, manager: StreamableHTTPSessionManager, ledger: SessionLedger, tg: anyio.abc.TaskGroup
    ) -> None:
        self.manager = manager
        self.ledger = ledger
        self._tg = tg
        self._seats: dict[str, Seat] = {}

    def __len__(self) -> int:
        self._prune()
        return len(self._seats)

    def _alive(self, session_id: str) -> bool:
        # The SDK forgets a session the moment it ends (DELETE, crash): its own table is the truth.
        return session_id in self.manager._server_instances

    def _prune(self) -> None:
        for session_id, seat in list(self._seats.items()):
            if not self._alive(session_id):
                del self._seats[session_id]
                seat.release()

    def _end(self, holder: list[str], reason: str) -> None:
        """End a session the ledger evicts or expires: the SDK discards it (its connection unwinds)."""
        if not holder:
            return
        session_id = holder[0]
        self._seats.pop(session_id, None)
        transport = self.manager._server_instances.get(session_id)
        if transport is not None:
            logger.info("%s: session %s ended: %s", self.ledger.where, session_id[:8], reason)
            self._tg.start_soon(self.manager._discard_session, session_id, transport)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        disconnected = anyio.Event()
        scope, receive = {**scope, DISCONNECTED_SCOPE_KEY: disconnected}, _watched(receive, disconnected)
        principal = scope.get(PRINCIPAL_SCOPE_KEY)
        consumer = "anonymous"
        if isinstance(principal, Principal):
            consumer = principal.consumer
            token = AccessToken(token="", client_id=principal.consumer, scopes=sorted(principal.scopes))
            scope = {**scope, "user": AuthenticatedUser(token)}
        method = scope.get("method")
        decoded: Any = None
        if method == "POST":
            body = await read_body(receive)
            receive = replay_body(body, receive)
            decoded = _decode(body)
            problem = _problem(decoded)
            if problem is not None:
                await reply(send, 400, _error(-32600, problem))
                return
        version = _header(scope.get("headers"), _VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            # A 2026-07-28 exchange (or a version the SDK refuses): no session to account.
            await self.manager.handle_request(scope, receive, send)
            return
        session_id = _header(scope.get("headers"), _SESSION_HEADER)
        if session_id is None:
            if method == "POST":
                await self._open(consumer, decoded, scope, receive, send)
            else:
                await self.manager.handle_request(scope, receive, send)  # the SDK's 400
            return
        seat = self._seats.get(session_id)
        if seat is None or seat.consumer != consumer:
            await self.manager.handle_request(scope, receive, send)  # the SDK's 404
            return
        with seat.busy() as use:
            if method != "POST" or not is_ping(decoded):
                use()
            await self.manager.handle_request(scope, receive, send)
        if not self._alive(session_id) and self._seats.get(session_id) is seat:
            del self._seats[session_id]
            seat.release()

    async def _open(self, consumer: str, decoded: Any, scope: Scope, receive: Receive, send: Send) -> None:
        self._prune()
        holder: list[str] = []
        try:
            seat = self.ledger.admit(consumer, lambda why: self._end(holder, why))
        except SessionLimitError as exc:
            request_id = decoded.get("id") if isinstance(decoded, dict) else None
            await reply(
                send,
                503,
                _error(SESSION_LIMIT, str(exc), request_id),
                headers=[(b"retry-after", str(RETRY_AFTER_S).encode())],
            )
            return

        async def watching(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                session_id = _header(message.get("headers"), _SESSION_HEADER)
                if session_id is not None and not holder:
                    # Seated before the client can see the id: its next request finds the seat.
                    seat.key = session_id
                    holder.append(session_id)
                    self._seats[session_id] = seat
            await send(message)

        try:
            await self.manager.handle_request(scope, receive, watching)
        finally:
            seat.opened()
            if not holder or not self._alive(holder[0]):
                if holder and self._seats.get(holder[0]) is seat:
                    del self._seats[holder[0]]
                seat.release()


@contextlib.asynccontextmanager
async def serve_sdk_server(
    server: Server[Any],
    *,
    where: str,
    limits: Callable[[], SessionLimits],
    total_setting: str,
    share_setting: str,
    telemetry: CallTelemetry | None = None,
    endpoint: str = "control",
) -> AsyncIterator[SdkSessions]:
    """An ASGI app serving ``server`` (mount it as a ``Route``) while the context is open.

    ``where`` names the endpoint in refusals, ``limits`` gives its session limits (read at each
    admission), ``total_setting``/``share_setting`` say where they are declared; ``telemetry``
    counts its sessions and refusals as ``endpoint``'s.
    """
    # The ledger, not the SDK, ends idle sessions and bounds them (the SDK's idle clock counts pings).
    manager = StreamableHTTPSessionManager(
        app=server, security_settings=None, session_idle_timeout=None, max_sessions=None
    )
    async with manager.run(), anyio.create_task_group() as tg:
        ledger = SessionLedger(
            where, limits, tg, total_setting=total_setting, share_setting=share_setting,
            **session_hooks(telemetry, endpoint, ""),
        )  # fmt: skip
        try:
            yield SdkSessions(manager, ledger, tg)
        finally:
            tg.cancel_scope.cancel()
