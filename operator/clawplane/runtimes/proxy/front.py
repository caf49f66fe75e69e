"""The HTTP front of one hosted server: era routing, client sessions, admission and limits.

A request whose ``MCP-Protocol-Version`` header names a 2026-07-28-era revision is a
self-contained exchange (``modern``). Anything else belongs to the handshake era: with an
``Mcp-Session-Id`` it goes to that session (404 when it is unknown, ended, or was opened
with another token — a session belongs to the credential that opened it); without one,
only an ``initialize`` POST may open a new session, which is admitted when the server
holds fewer than ``maxSessions`` sessions and its upstream could be started.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import anyio.abc
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, check_accept_headers
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from clawplane.runtimes.proxy.guard import Principal, reply
from clawplane.runtimes.proxy.hosting import SERVER_UNAVAILABLE, SESSION_LIMIT, Hosted, UnavailableError
from clawplane.runtimes.proxy.legacy import LegacySession, read_body, replay_body
from clawplane.runtimes.proxy.modern import handle_modern
from clawplane.runtimes.proxy.mux import UpstreamGoneError

__all__ = ["ServerFront"]

logger = logging.getLogger(__name__)


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _is_json(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == "application/json"


class ServerFront:
    """Routes one hosted server's HTTP requests (see the module docstring)."""

    def __init__(self, hosted: Hosted, task_group: anyio.abc.TaskGroup) -> None:
        self.hosted = hosted
        self._tg = task_group
        self.sessions: dict[str, LegacySession] = {}
        self._admission = anyio.Lock()

    async def handle(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        """Serve one request for this server."""
        request = Request(scope, receive)
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version in MODERN_PROTOCOL_VERSIONS:
            await handle_modern(self.hosted, scope, receive, send, principal)
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
        if not (isinstance(message, dict) and message.get("method") == "initialize" and "id" in message):
            await reply(send, 400, _error(-32600, "Bad Request: Missing session ID"))
            return
        policy = self.hosted.policy
        async with self._admission:
            if len(self.sessions) >= policy.max_sessions:
                await reply(
                    send,
                    503,
                    _error(
                        SESSION_LIMIT,
                        f'MCP server "{self.hosted.name}" already has {len(self.sessions)} client sessions '
                        f"(its maxSessions); close an idle session (HTTP DELETE) or raise spec.maxSessions",
                        message["id"],
                    ),
                )
                return
            session = LegacySession(
                self.hosted.name,
                principal,
                self.hosted.session_upstream(f"{principal.consumer}"),
                idle_ttl=policy.idle_ttl,
                on_end=self._ended,
                tool_allowed=self.hosted.tool_allowed,
                gate=self.hosted.call_gate(principal.consumer),
            )
            try:
                await self._tg.start(session.run)
            except (UnavailableError, UpstreamGoneError) as exc:
                await reply(send, 503, _error(SERVER_UNAVAILABLE, str(exc), message["id"]))
                return
            self.sessions[session.id] = session
            self.hosted.sessions_changed(len(self.sessions))
        await session.handle(scope, replay_body(body), send)

    def _ended(self, session: LegacySession) -> None:
        if self.sessions.pop(session.id, None) is not None:
            self.hosted.sessions_changed(len(self.sessions))

    async def close(self) -> None:
        """End every session (the listener is stopping)."""
        for session in list(self.sessions.values()):
            session.terminate()
