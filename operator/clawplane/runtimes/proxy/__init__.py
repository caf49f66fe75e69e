"""The one MCP proxy: hosted servers over streamable HTTP, for the supervisor's endpoint and the bridge.

Layers, bottom up:

- ``wire`` — raw JSON-RPC messages (dicts); ``channel`` — a stdio server's pipes as messages;
- ``mux`` — several parties over one server process, each seeing only its own traffic;
- ``upstream`` — a mux over a process, and SDK client streams over a mux link;
- ``hosting`` — what the proxy needs from a hosted server (``ServerRuntime`` provides it);
- ``legacy`` / ``modern`` — one handshake-era client session, one 2026-07-28 exchange;
- ``eras`` / ``inputs`` — client input across eras (MRTR bridging): a 2026-07-28-only server for
  a handshake-era session, a handshake-era server's questions for a 2026-07-28 client;
- ``ledger`` — one accounting of an endpoint's sessions: limits, each consumer's share, idleness
  and eviction (hosted servers, the bridge, and the SDK-served routes of ``sdkroute``);
- ``front`` — era routing, sessions, admission and limits of one server;
- ``guard`` — Host/Origin checks and bearer tokens; ``app`` — routing, health and mounted ``Route``
  apps (the control plane, per-agent endpoints);
- ``listener`` / ``server`` — the TCP socket (TCP_NODELAY) and the running listener.

Forwarding is faithful: requests, notifications and server→client requests pass as
the client or server wrote them; only ids (and a colliding progress token) are swapped
to keep parties apart, and the server's declared ``toolFilter`` hides filtered tools.
"""

from clawplane.runtimes.proxy.app import PRINCIPAL_SCOPE_KEY, Route
from clawplane.runtimes.proxy.guard import Principal, RequestGuard, TokenTable, is_loopback, token_digest
from clawplane.runtimes.proxy.hosting import (
    SERVER_UNAVAILABLE,
    SESSION_LIMIT,
    Hosted,
    HostedDirectory,
    SessionPolicy,
    UnavailableError,
)
from clawplane.runtimes.proxy.listener import Endpoint, PortInUseError, bind
from clawplane.runtimes.proxy.server import ProxyHandle, serve_proxy

__all__ = [
    "PRINCIPAL_SCOPE_KEY",
    "SERVER_UNAVAILABLE",
    "SESSION_LIMIT",
    "Endpoint",
    "Hosted",
    "HostedDirectory",
    "PortInUseError",
    "Principal",
    "ProxyHandle",
    "RequestGuard",
    "Route",
    "SessionPolicy",
    "TokenTable",
    "UnavailableError",
    "bind",
    "is_loopback",
    "serve_proxy",
    "token_digest",
]
