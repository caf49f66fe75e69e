"""The HTTP front of one hosted server: era routing, client sessions, admission and limits.

A request whose ``MCP-Protocol-Version`` header names a revision outside the handshake era is
a self-contained exchange (``modern``): a 2026-07-28-era one is served, any other (unknown)
version is refused there with ``-32022`` naming the versions served, under the request's own
id, as the SDK's servers route it. No header at all, or a handshake-era one, belongs to the
handshake era: with an
``Mcp-Session-Id`` it goes to that session (404 when it is unknown, ended, or was opened
with another token — a session belongs to the credential that opened it); without one,
only an ``initialize`` POST (with a string or integer id and object params) may open a new
session. The server's ``ledger`` admits it — within ``maxSessions`` and the consumer's share,
ending the least-recently-used idle session to make room — and its upstream must start;
otherwise the answer is 503 with ``-32011`` (every session that could make room is busy; with
``Retry-After``) or ``-32010`` saying why.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import anyio.abc
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, check_accept_headers
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from clawplane.runtimes.proxy.eras.inputs import Parking
from clawplane.runtimes.proxy.eras.legacy import LegacySession
from clawplane.runtimes.proxy.eras.modern import handle_modern
from clawplane.runtimes.proxy.eras.sse import invalid_id, read_body, replay_body
from clawplane.runtimes.proxy.guard import Principal, reply
from clawplane.runtimes.proxy.hosting import SERVER_UNAVAILABLE, SESSION_LIMIT, Hosted, UnavailableError
from clawplane.runtimes.proxy.ledger import RETRY_AFTER_S, SessionLedger, SessionLimitError
from clawplane.runtimes.proxy.mux import UpstreamGoneError
from clawplane.telemetry import session_hooks

__all__ = ["ServerFront"]

logger = logging.getLogger(__name__)


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _is_json(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == "application/json"


class ServerFront:
    """Routes one hosted server's HTTP requests (see the module docstring)."""

    def __init__(
        self,
        hosted: Hosted,
        task_group: anyio.abc.TaskGroup,
        *,
        total_setting: str = "spec.maxSessions (`clawplane bridge --max-sessions`)",
        share_setting: str = "spec.maxSessionsPerConsumer (`clawplane bridge --max-sessions-per-consumer`)",
    ) -> None:
        self.hosted = hosted
        self._tg = task_group
        self.sessions: dict[str, LegacySession] = {}
        self.ledger = SessionLedger(
            f'MCP server "{hosted.name}"',
            lambda: hosted.policy.limits,
            task_group,
            total_setting=total_setting,
            share_setting=share_setting,
            on_evict=hosted.session_evicted,
            **session_hooks(hosted.telemetry, "hosted", hosted.name),
        )
        self._admission = anyio.Lock()
        self.parking = Parking(task_group)
        """2026-07-28 calls waiting for their client's input (``inputs``)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        """Serve one request for this server."""
        request = Request(scope, receive)
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await handle_modern(self.hosted, scope, receive, send, principal, self.parking)
            return
        session_id = request.headers.get(MCP_SESSION_ID_HEADER)
        if session_id is not None:
            session = self.sessions.get(session_id)
            if session is None or session.principal.consumer != principal.consumer:
                await reply(send, 404, _error(-32600, "Session not found"))
                return
            await session.handle(scope, receive, send)
            return
        await self._open(scope, request, receive, send, principal)

    async def _open(
        self, scope: Scope, request: Request, receive: Receive, send: Send, principal: Principal
    ) -> None:
        if request.method != "POST":
            status = 400 if request.method in ("GET", "DELETE") else 405
            await reply(send, status, _error(-32600, "Bad Request: Missing session ID"))
            return
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse):
            await reply(
                send,
                406,
                _error(
                    -32600, "Not Acceptable: Client must accept both application/json and text/event-stream"
                ),
            )
            return
        if not _is_json(request.headers.get("content-type", "")):
            await reply(
                send, 415, _error(-32600, "Unsupported Media Type: Content-Type must be application/json")
            )
            return
        body = await read_body(receive)
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as exc:
            await reply(send, 400, _error(-32700, f"Parse error: {exc}"))
            return
        problem = invalid_id(message)
        if problem is not None:
            await reply(send, 400, _error(-32600, problem))
            return
        if not (isinstance(message, dict) and message.get("method") == "initialize" and "id" in message):
            await reply(send, 400, _error(-32600, "Bad Request: Missing session ID"))
            return
        if not isinstance(message.get("params"), dict):
            await reply(send, 400, _error(-32600, "Invalid Request: initialize needs params (an object)"))
            return
        policy = self.hosted.policy
        async with self._admission:
            found: list[LegacySession] = []

            def end(why: str) -> None:
                for session in found:
                    session.terminate(why)

            try:
                seat = self.ledger.admit(principal.consumer, end)
            except SessionLimitError as exc:
                await reply(
                    send,
                    503,
                    _error(SESSION_LIMIT, str(exc), message["id"]),
                    headers=[(b"retry-after", str(RETRY_AFTER_S).encode())],
                )
                return
            session = LegacySession(
                self.hosted.name,
                principal,
                self.hosted.session_upstream(f"{principal.consumer}"),
                on_end=self._ended,
                seat=seat,
                connect_timeout=policy.connect_timeout,
                tool_allowed=self.hosted.tool_allowed,
                gate=self.hosted.call_gate(principal.consumer),
                site=self.hosted.call_site("hosted", principal.consumer),
                telemetry=self.hosted.telemetry,
            )
            found.append(session)
            try:
                await self._tg.start(session.run)
            except (UnavailableError, UpstreamGoneError) as exc:
                seat.release()
                await reply(send, 503, _error(SERVER_UNAVAILABLE, str(exc), message["id"]))
                return
            seat.key = session.id
            self.sessions[session.id] = session
            self.hosted.sessions_changed(len(self.sessions))
        try:
            await session.handle(scope, replay_body(body, receive), send)
        finally:
            seat.opened()

    def _ended(self, session: LegacySession) -> None:
        if session.seat is not None:
            session.seat.release()
        if self.sessions.pop(session.id, None) is not None:
            self.hosted.sessions_changed(len(self.sessions))

    async def close(self) -> None:
        """End every session and parked call (the listener is stopping)."""
        for session in list(self.sessions.values()):
            session.terminate()
        await self.parking.close()
