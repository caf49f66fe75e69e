"""What the proxy needs from a hosted server (a ``ServerRuntime`` provides it).

A hosted stdio server has one *primary* process: the one the supervisor itself talks to
(tool catalog, health, ``list_changed``). 2026-07-28 traffic is stateless, so it shares
that process. Handshake-era clients each get a *session upstream*: with ``perClient``
(the default) a private process of their own, started for the session and torn down
with it; with ``shared`` one process for all of them (the primary one when it speaks
the handshake era, else a second long-lived one).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from clawplane.models import SessionMode
from clawplane.runtimes.proxy.gate import CallGate
from clawplane.runtimes.proxy.ledger import DEFAULT_IDLE_TTL_S, DEFAULT_MAX_SESSIONS, SessionLimits
from clawplane.runtimes.proxy.mux import Mux
from clawplane.telemetry import CallSite, CallTelemetry

__all__ = [
    "SERVER_UNAVAILABLE",
    "SESSION_LIMIT",
    "Hosted",
    "HostedDirectory",
    "SessionMode",
    "SessionPolicy",
    "UnavailableError",
    "discovery_of",
]

# JSON-RPC error codes the proxy itself answers with (implementation-defined band; the
# SDK uses -32000 and -32001). Documented in docs/mcp-hosting.md.
SERVER_UNAVAILABLE = -32010
"""The hosted server is not running or not ready (the message says which and why)."""
SESSION_LIMIT = -32011
"""No slot for a new session: the endpoint holds ``maxSessions`` sessions, or the consumer its share,
and none of those that would have to make room is idle."""


@dataclass(frozen=True, slots=True)
class SessionPolicy:
    """Session isolation and limits of one hosted server."""

    mode: SessionMode = SessionMode.PER_CLIENT
    max_sessions: int = DEFAULT_MAX_SESSIONS
    idle_ttl: float = DEFAULT_IDLE_TTL_S
    """Seconds an idle session (no request in flight, no open stream) lives after its last use."""
    per_consumer: int | None = None
    """Sessions one consumer may hold (None: three quarters of ``max_sessions``)."""
    connect_timeout: float = 30.0
    """Seconds a new session's ``initialize`` may wait for the server's answer; then the session is closed."""

    @property
    def limits(self) -> SessionLimits:
        """The limits the hosted server's session ledger enforces."""
        return SessionLimits(self.max_sessions, self.per_consumer, self.idle_ttl)


def discovery_of(capabilities: Any, server_info: Any, instructions: str | None) -> dict[str, Any]:
    """A 2026-07-28 ``server/discover`` result made of a handshake-era server's ``initialize`` answer
    (``capabilities`` and ``server_info`` as the SDK's models): what it offers, under the one
    revision the proxy lets 2026-07-28 clients speak to it in."""
    offered = capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)
    if isinstance(offered.get("resources"), dict):
        # Its resource updates need a handshake subscription, which 2026-07-28 clients cannot make.
        offered["resources"].pop("subscribe", None)
    result: dict[str, Any] = {
        "supportedVersions": list(MODERN_PROTOCOL_VERSIONS),
        "capabilities": offered,
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
    }
    if instructions is not None:
        result["instructions"] = instructions
    if server_info is not None:
        info = server_info.model_dump(by_alias=True, mode="json", exclude_none=True)
        result["_meta"] = {"io.modelcontextprotocol/serverInfo": info}
    return result


class UnavailableError(Exception):
    """The server cannot take requests now; ``str()`` says why and what to do."""


class Hosted(Protocol):
    """One hosted server as the proxy sees it."""

    name: str

    @property
    def policy(self) -> SessionPolicy:
        """Its session isolation and limits."""
        ...

    async def primary(self) -> Mux:
        """The primary process's multiplexer, waiting while the server (re)starts.

        Raises:
            UnavailableError: Not ready within the server's connection timeout.
        """
        ...

    def session_upstream(self, label: str) -> AbstractAsyncContextManager[Mux]:
        """An upstream for one handshake-era client session (see the module docstring).

        Raises:
            UnavailableError: The server is not ready, or its process could not start.
        """
        ...

    def tool_allowed(self, tool: str) -> bool:
        """Whether the server's declared ``toolFilter`` lets clients see and call ``tool``."""
        ...

    def tool_input_schema(self, tool: str) -> Mapping[str, Any] | None:
        """The input schema of one of its tools, as listed by a fresh session."""
        ...

    def call_gate(self, caller: str, *, endpoint: str | None = None) -> CallGate | None:
        """Which of ``caller``'s calls (made on ``endpoint``) wait for an approval (None: none do)."""
        ...

    def sessions_changed(self, count: int) -> None:
        """The proxy now holds ``count`` client sessions of this server."""
        ...

    @property
    def telemetry(self) -> CallTelemetry | None:
        """Where the proxy reports the requests it carries to this server (None: nowhere)."""
        ...

    def call_site(
        self,
        endpoint: str,
        consumer: str,
        *,
        agent: str | None = None,
        session: str | None = None,
        revision: str | None = None,
    ) -> CallSite:
        """Where a party's requests to this server come from, as ``telemetry`` records them."""
        ...

    def session_evicted(self) -> None:
        """The proxy ended an idle session of this server to make room for a new one."""
        ...

    def handshake_discovery(self) -> Mapping[str, Any] | None:
        """What ``server/discover`` answers for it when it speaks only the handshake era (None: it
        speaks 2026-07-28 and answers itself)."""
        ...


class HostedDirectory(Protocol):
    """Where a proxy listener finds the servers it exposes."""

    def hosted(self, name: str) -> Hosted | None:
        """The hosted server ``name``, or None."""
        ...

    def health(self) -> Mapping[str, str]:
        """The phase of every exposed server, by name."""
        ...
