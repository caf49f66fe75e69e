"""clawplane.runtimes: the local MCP supervisor and the bridge (the only layer that imports ``mcp``).

A runtime owns one McpServer. For ``stdio`` it is a child process in its own process group,
with a minimal environment plus the declared ``env`` (secrets resolved at start), stderr
read line by line into logs and stdout reserved for the protocol; for ``sse`` and
``streamable-http`` it is a client connection with the declared headers. It connects within
``connectionTimeoutMs``, bounds every request by ``requestTimeoutMs``, lists tools within
OpenClaw's bounds, applies ``toolFilter``, names tools as OpenClaw does, follows
``tools/list_changed`` in both protocol eras, pauses a server after 3 consecutive failed
requests (60 s), restarts a crashed process with exponential backoff (1 s doubling to 30 s)
and tears the whole process tree down on removal or shutdown.

Public API (everything the reconcile engine and the CLI need; no SDK types leak out):

- ``Supervisor`` — ``ensure``/``remove`` runtimes, ``status``/``statuses``/``wait_until``,
  ``catalog`` (an agent's merged tool list), ``call_tool``/``invoke``, ``stderr``, and
  ``expose`` (hosted servers over streamable HTTP at ``http://127.0.0.1:PORT/mcp/<name>``,
  through the proxy in ``runtimes.proxy``: faithful forwarding, per-client sessions, tokens).
- ``RuntimeSettings`` — timings and bounds; defaults are OpenClaw's constants.
- ``RuntimeStatus``, ``Phase``, ``RuntimeEvent``, ``EventKind``, ``ToolEntry``, ``ToolKind``,
  ``ToolResult`` — plain values.
- ``probe_servers`` / ``ProbeReport`` — start, list and stop declared servers once
  (``clawplane mcp probe``; ``hosting: consumer`` servers); ``ProbeCall`` / ``ProbeCallOutcome``
  — one tool call made while probing.
- ``run_bridge`` / ``BridgeOptions`` — the standalone one-server bridge behind ``clawplane bridge``.
- ``RequestGuard``, ``TokenTable``, ``Principal``, ``Endpoint``, ``PortInUseError`` — who may
  call a listener, and where it listens.
- ``AgentEndpoint`` / ``AGENT_SCOPE_KEY`` — one agent's aggregated endpoint; ``ServerTools``,
  ``ToolSpec``, ``merge_catalog``, ``schema_hash`` — tool surfaces as catalogs record them.
- ``Launch`` / ``prepare_launch`` — what starting one server takes (the login flows start them);
  ``redact_url`` — a URL with its secrets masked.
- The errors in ``clawplane.runtimes.errors``.

The names resolve on first use (PEP 562): importing ``clawplane.runtimes.catalog`` or reading
``RuntimeSettings`` must not load the MCP SDK, the proxy and the supervisor, which would add
~0.4 s to every CLI command that only reads status.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawplane.runtimes.aggregate import AGENT_SCOPE_KEY, AgentEndpoint
    from clawplane.runtimes.catalog import (
        ServerTools,
        ToolEntry,
        ToolKind,
        ToolSpec,
        merge_catalog,
        schema_hash,
    )
    from clawplane.runtimes.errors import (
        ConnectTimeoutError,
        ListingError,
        McpRuntimeError,
        RequestFailedError,
        RequestTimeoutError,
        ServerPausedError,
        ServerUnavailableError,
        StartError,
        UnknownServerError,
    )
    from clawplane.runtimes.launch import Launch, prepare_launch
    from clawplane.runtimes.probe import ProbeCall, ProbeCallOutcome, ProbeReport, ProbeTarget, probe_servers
    from clawplane.runtimes.proxy import (
        Endpoint,
        PortInUseError,
        Principal,
        RequestGuard,
        TokenTable,
        token_digest,
    )
    from clawplane.runtimes.redaction import redact_url
    from clawplane.runtimes.settings import RuntimeSettings
    from clawplane.runtimes.standalone import BridgeOptions, BridgeOutcome, run_bridge
    from clawplane.runtimes.status import EventKind, Phase, RuntimeEvent, RuntimeStatus, ToolResult
    from clawplane.runtimes.supervisor import Supervisor

_HOMES: dict[str, str] = {
    "AGENT_SCOPE_KEY": "clawplane.runtimes.aggregate",
    "AgentEndpoint": "clawplane.runtimes.aggregate",
    "BridgeOptions": "clawplane.runtimes.standalone",
    "BridgeOutcome": "clawplane.runtimes.standalone",
    "ConnectTimeoutError": "clawplane.runtimes.errors",
    "Endpoint": "clawplane.runtimes.proxy",
    "EventKind": "clawplane.runtimes.status",
    "Launch": "clawplane.runtimes.launch",
    "ListingError": "clawplane.runtimes.errors",
    "McpRuntimeError": "clawplane.runtimes.errors",
    "Phase": "clawplane.runtimes.status",
    "PortInUseError": "clawplane.runtimes.proxy",
    "Principal": "clawplane.runtimes.proxy",
    "ProbeCall": "clawplane.runtimes.probe",
    "ProbeCallOutcome": "clawplane.runtimes.probe",
    "ProbeReport": "clawplane.runtimes.probe",
    "ProbeTarget": "clawplane.runtimes.probe",
    "RequestFailedError": "clawplane.runtimes.errors",
    "RequestGuard": "clawplane.runtimes.proxy",
    "RequestTimeoutError": "clawplane.runtimes.errors",
    "RuntimeEvent": "clawplane.runtimes.status",
    "RuntimeSettings": "clawplane.runtimes.settings",
    "RuntimeStatus": "clawplane.runtimes.status",
    "ServerPausedError": "clawplane.runtimes.errors",
    "ServerTools": "clawplane.runtimes.catalog",
    "ServerUnavailableError": "clawplane.runtimes.errors",
    "StartError": "clawplane.runtimes.errors",
    "Supervisor": "clawplane.runtimes.supervisor",
    "TokenTable": "clawplane.runtimes.proxy",
    "ToolEntry": "clawplane.runtimes.catalog",
    "ToolKind": "clawplane.runtimes.catalog",
    "ToolResult": "clawplane.runtimes.status",
    "ToolSpec": "clawplane.runtimes.catalog",
    "UnknownServerError": "clawplane.runtimes.errors",
    "merge_catalog": "clawplane.runtimes.catalog",
    "prepare_launch": "clawplane.runtimes.launch",
    "probe_servers": "clawplane.runtimes.probe",
    "redact_url": "clawplane.runtimes.redaction",
    "run_bridge": "clawplane.runtimes.standalone",
    "schema_hash": "clawplane.runtimes.catalog",
    "token_digest": "clawplane.runtimes.proxy",
}

__all__ = [
    "AGENT_SCOPE_KEY",
    "AgentEndpoint",
    "BridgeOptions",
    "BridgeOutcome",
    "ConnectTimeoutError",
    "Endpoint",
    "EventKind",
    "Launch",
    "ListingError",
    "McpRuntimeError",
    "Phase",
    "PortInUseError",
    "Principal",
    "ProbeCall",
    "ProbeCallOutcome",
    "ProbeReport",
    "ProbeTarget",
    "RequestFailedError",
    "RequestGuard",
    "RequestTimeoutError",
    "RuntimeEvent",
    "RuntimeSettings",
    "RuntimeStatus",
    "ServerPausedError",
    "ServerTools",
    "ServerUnavailableError",
    "StartError",
    "Supervisor",
    "TokenTable",
    "ToolEntry",
    "ToolKind",
    "ToolResult",
    "ToolSpec",
    "UnknownServerError",
    "merge_catalog",
    "prepare_launch",
    "probe_servers",
    "redact_url",
    "run_bridge",
    "schema_hash",
    "token_digest",
]


def __getattr__(name: str) -> Any:
    """Import the module that defines a public name when it is first read."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, loaded or not."""
    return sorted(set(globals()) | set(_HOMES))
