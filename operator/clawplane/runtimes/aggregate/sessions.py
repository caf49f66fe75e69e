"""The agent endpoint's sessions: which agent and consumer ask, and their downstream sessions.

A downstream session (or one consumer's 2026-07-28 requests, which carry no session) holds one
upstream session per backend server, opened on first use and closed with it (or after
``idle_ttl`` without requests for the stateless ones).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import anyio
import anyio.abc
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from clawplane.runtimes.aggregate import skills as skills_ext
from clawplane.runtimes.aggregate.asking import AskedCalls
from clawplane.runtimes.aggregate.backend import Backend
from clawplane.runtimes.catalog import ServerTools, ToolEntry, ToolKind
from clawplane.runtimes.proxy import PRINCIPAL_SCOPE_KEY, HostedDirectory, Principal

__all__ = ["AGENT_SCOPE_KEY", "Catalogs", "Digest", "Downstream", "EndpointSessions", "catalog_digest"]

AGENT_SCOPE_KEY: Final = "clawplane.agent"
"""Where the route puts the agent id (from the path) in the ASGI scope."""


class Catalogs(skills_ext.SkillSource, Protocol):
    """Where the endpoint learns an agent's servers and how their tools merge into its catalog,
    and which skills it is served."""

    def surfaces(self, agent: str) -> Sequence[ServerTools] | None:
        """The agent's hosted servers as the supervisor last listed them (None: no such agent)."""
        ...

    def merge(self, agent: str, surfaces: Sequence[ServerTools]) -> Sequence[ToolEntry]:
        """The agent's catalog over ``surfaces``: merged as OpenClaw does, filtered by its tool policy."""
        ...


@dataclass(eq=False)
class Downstream:
    """One downstream session (or one consumer's 2026-07-28 requests) and its backend sessions."""

    key: Any
    agent: str
    consumer: str
    connection: weakref.ref[Any] | None
    backends: dict[str, Backend] = field(default_factory=dict)
    opening: dict[str, anyio.Lock] = field(default_factory=dict)
    resources: dict[str, str] = field(default_factory=dict)  # uri → server
    templates: list[tuple[re.Pattern[str], str, str]] = field(
        default_factory=list
    )  # (match, server, template)
    prompts: dict[str, tuple[str, str]] = field(default_factory=dict)  # prefixed → (server, raw name)
    catalog: Sequence[ToolEntry] | None = None  # from this session's own listings; None: list again
    log_level: str | None = None  # what the client asked with logging/setLevel (every backend gets it)
    used: float = field(default_factory=time.monotonic)

    def close(self) -> None:
        """Close every backend session it holds."""
        for backend in self.backends.values():
            backend.close()
        self.backends.clear()


Digest = tuple[str, frozenset[str], frozenset[str], str]


def catalog_digest(entries: Sequence[ToolEntry], skills: str) -> Digest:
    """What a list change is told from: the tools, the resource and prompt servers, the skills key."""
    rows = [(e.name, e.description, e.title, json.dumps(e.input_schema, sort_keys=True, default=str))
            for e in entries]  # fmt: skip
    tools = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    resources = frozenset(e.server for e in entries if e.kind is ToolKind.RESOURCES_LIST)
    prompts = frozenset(e.server for e in entries if e.kind is ToolKind.PROMPTS_LIST)
    return tools, resources, prompts, skills


class EndpointSessions:
    """The endpoint's state and who asks: the agent and consumer of a request, the agent's catalog,
    and the downstream session (with its backend sessions) a request belongs to.

    The base of the endpoint's method groups (``changes``, ``forwarding``, ``tools``, ``natives``),
    which ``server.AgentEndpoint`` joins: they share this state, so they are one class in parts.
    """

    # Set by ``AgentEndpoint.__init__`` (the one class these parts make).
    directory: HostedDirectory
    catalogs: Catalogs
    change_event: Callable[[], anyio.Event]
    idle_ttl: float
    _downstreams: dict[Any, Downstream]
    _digests: dict[str, Digest]
    _buses: dict[str, tuple[InMemorySubscriptionBus, ListenHandler]]
    _tg: anyio.abc.TaskGroup | None
    _asking: AskedCalls | None

    def _forget(self, key: Any) -> None:
        downstream = self._downstreams.pop(key, None)
        if downstream is not None:
            downstream.close()

    async def _reap_idle(self) -> None:
        while True:
            await anyio.sleep(max(1.0, self.idle_ttl / 4))
            now = time.monotonic()
            for key, downstream in list(self._downstreams.items()):
                if downstream.connection is None and now - downstream.used > self.idle_ttl:
                    self._downstreams.pop(key, None)
                    downstream.close()

    # -- who asks --------------------------------------------------------------------------------
    def _agent(self, ctx: ServerRequestContext[Any, Any]) -> tuple[str, str]:
        scope = getattr(ctx.request, "scope", None)
        agent = scope.get(AGENT_SCOPE_KEY) if isinstance(scope, Mapping) else None
        principal = scope.get(PRINCIPAL_SCOPE_KEY) if isinstance(scope, Mapping) else None
        if not isinstance(agent, str):
            raise MCPError(types.INVALID_REQUEST, "the agent endpoint is served at /mcp/agents/<agent>")
        consumer = principal.consumer if isinstance(principal, Principal) else "anonymous"
        return agent, consumer

    def _catalog(self, agent: str, *, strict: bool = True) -> Sequence[ToolEntry]:
        """The agent's catalog over the supervisor's listings (what ``tools.json`` is made from)."""
        surfaces = self.catalogs.surfaces(agent)
        if surfaces is None:
            if strict:
                raise MCPError(types.INVALID_PARAMS, f'no agent "{agent}" has been applied in this folder')
            return ()
        entries = self.catalogs.merge(agent, surfaces)
        self._digests.setdefault(agent, catalog_digest(entries, skills_ext.skills_key(self.catalogs, agent)))
        return entries

    def _downstream(self, ctx: ServerRequestContext[Any, Any], agent: str, consumer: str) -> Downstream:
        connection = getattr(ctx.session, "_connection", None)
        stateless = connection is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        key: Any = ("stateless", agent, consumer) if stateless else id(connection)
        downstream = self._downstreams.get(key)
        if downstream is not None and downstream.agent != agent:
            raise MCPError(types.INVALID_REQUEST, f'this session belongs to agent "{downstream.agent}"')
        if downstream is None:
            ref = None
            if not stateless and connection is not None:
                ref = weakref.ref(connection)
                # The SDK unwinds the connection's exit stack when the session ends (DELETE, idle, crash).
                connection.exit_stack.callback(self._forget, key)
            downstream = self._downstreams[key] = Downstream(key, agent, consumer, ref)
        downstream.used = time.monotonic()
        return downstream
