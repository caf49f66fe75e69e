"""The one MCP proxy: hosted servers over streamable HTTP, for the supervisor's endpoint and the bridge.

Layers, bottom up:

- ``wire`` — raw JSON-RPC messages (dicts); ``channel`` — a stdio server's pipes as messages;
- ``mux`` — several parties over one server process, each seeing only its own traffic;
- ``upstream`` — a mux over a process, and SDK client streams over a mux link;
- ``hosting`` — what the proxy needs from a hosted server (``ServerRuntime`` provides it);
- ``eras/`` — one request's path per era: ``legacy`` / ``modern``, one handshake-era client
  session and one 2026-07-28 exchange; ``bridging`` / ``inputs``, client input across eras (MRTR):
  a 2026-07-28-only server for a handshake-era session, a handshake-era server's questions for a
  2026-07-28 client;
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
from clawplane.runtimes.proxy.eras.inputs import (
    INPUT_KEYS,
    PARK_TTL_S,
    PARKED_PER_CONSUMER,
    STATE_PREFIX,
    declined,
)
from clawplane.runtimes.proxy.gate import (
    CallGate,
    Departure,
    GatedCall,
    Progress,
    ToolGate,
    Verdict,
    refusing_gate,
)
from clawplane.runtimes.proxy.guard import (
    Principal,
    RequestGuard,
    TokenTable,
    is_loopback,
    reply,
    token_digest,
)
from clawplane.runtimes.proxy.hosting import (
    SERVER_UNAVAILABLE,
    SESSION_LIMIT,
    Hosted,
    HostedDirectory,
    SessionPolicy,
    UnavailableError,
    discovery_of,
)
from clawplane.runtimes.proxy.ledger import SessionLimits
from clawplane.runtimes.proxy.listener import Endpoint, PortInUseError, bind, serve_app
from clawplane.runtimes.proxy.mux import Link, Mux, UpstreamGoneError
from clawplane.runtimes.proxy.replicas import PeerSet, ReplicaRouter, replica_tag
from clawplane.runtimes.proxy.sdkroute import DISCONNECTED_SCOPE_KEY, serve_sdk_server
from clawplane.runtimes.proxy.server import ProxyHandle, serve_proxy
from clawplane.runtimes.proxy.upstream import link_transport, open_mux
from clawplane.runtimes.proxy.wire import Message, error_response, is_request, is_response

__all__ = [
    "DISCONNECTED_SCOPE_KEY",
    "INPUT_KEYS",
    "PARKED_PER_CONSUMER",
    "PARK_TTL_S",
    "PRINCIPAL_SCOPE_KEY",
    "SERVER_UNAVAILABLE",
    "SESSION_LIMIT",
    "STATE_PREFIX",
    "CallGate",
    "Departure",
    "Endpoint",
    "GatedCall",
    "Hosted",
    "HostedDirectory",
    "Link",
    "Message",
    "Mux",
    "PeerSet",
    "PortInUseError",
    "Principal",
    "Progress",
    "ProxyHandle",
    "ReplicaRouter",
    "RequestGuard",
    "Route",
    "SessionLimits",
    "SessionPolicy",
    "TokenTable",
    "ToolGate",
    "UnavailableError",
    "UpstreamGoneError",
    "Verdict",
    "bind",
    "declined",
    "discovery_of",
    "error_response",
    "is_loopback",
    "is_request",
    "is_response",
    "link_transport",
    "open_mux",
    "refusing_gate",
    "replica_tag",
    "reply",
    "serve_app",
    "serve_proxy",
    "serve_sdk_server",
    "token_digest",
]
