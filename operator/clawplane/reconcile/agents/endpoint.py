"""The per-agent aggregated endpoints on the folder supervisor's endpoint: ``/mcp/agents/<agent>``.

Each applied agent is served as one MCP server (``runtimes.aggregate``) over the servers of
``Agent.mcpServers`` that the supervisor hosts, with the catalog merged and filtered by the
same code that writes ``agents/<id>/tools.json``, but from the servers' live tool lists.
Remote and consumer-hosted servers are not reachable from here and are left out.

Only the agent's own token (consumer ``agent:<id>``) reaches its endpoint: its ``servers``
hold ``agents/<id>`` and nothing else, so it gets 403 on hosted servers, on other agents'
endpoints and on the control plane; every other token gets 403 here. What agents are and
which servers and policy they have is taken at each apply (``AgentRoutes.update``).

Each agent's eligible skills (its last rendered snapshot's, same order) are served there too,
as MCP skills (SEP-2640, ``runtimes.aggregate.skills``), unless ``Gateway.spec.endpoint.skills``
is ``false``; they are listed again at each apply, and a change is announced to the agent's
sessions.

Sessions of all agents are one accounting (``Gateway.spec.endpoint.agentSessions``, each
agent's token one consumer): a session starts its own process of each ``perClient`` server it
uses, so without a bound one agent token could start processes without end.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence

import anyio
from starlette.types import Receive, Scope, Send

from clawplane.desired import DesiredState
from clawplane.models import (
    DEFAULT_ENDPOINT_MAX_SESSIONS,
    DEFAULT_ENDPOINT_SESSION_IDLE_TTL_MS,
    EndpointSessions,
    GatewayEndpoint,
)
from clawplane.reconcile.agents.catalog import AgentRoute, agent_routes, filter_catalog
from clawplane.runtimes import (
    AGENT_SCOPE_KEY,
    AgentEndpoint,
    Principal,
    ServerTools,
    Supervisor,
    ToolEntry,
    merge_catalog,
)
from clawplane.runtimes.proxy import Route, SessionLimits, serve_sdk_server
from clawplane.skills import AgentSnapshot
from clawplane.skills.served import DigestCache, ServedSkill, served_skills
from clawplane.state import agent_access

__all__ = ["AGENTS_PATH", "AgentRoutes", "agent_of", "endpoint_limits", "serve_agent_endpoints"]

AGENTS_PATH = "/mcp/agents"


def endpoint_limits(declared: EndpointSessions | None) -> SessionLimits:
    """The session limits of one of the supervisor's own endpoints, declared or default."""
    declared = declared or EndpointSessions()
    return SessionLimits(
        max_sessions=declared.max_sessions or DEFAULT_ENDPOINT_MAX_SESSIONS,
        per_consumer=declared.max_sessions_per_consumer,
        idle_ttl=(declared.session_idle_ttl_ms or DEFAULT_ENDPOINT_SESSION_IDLE_TTL_MS) / 1000,
    )


class AgentRoutes:
    """The applied agents, by id; updated after each apply's outputs are written."""

    def __init__(self) -> None:
        self.routes: dict[str, AgentRoute] = {}
        self.supervisor: Supervisor | None = None
        self.endpoint = GatewayEndpoint()
        """The applied ``Gateway.spec.endpoint`` (the limits of ``/mcp/agents`` and ``/mcp/_clawplane``)."""
        self._skills: dict[str, tuple[ServedSkill, ...]] = {}
        self._digests: DigestCache = {}

    def update(self, desired: DesiredState, snapshots: Mapping[str, AgentSnapshot] | None = None) -> None:
        """Serve the agents of ``desired`` (and their skills from ``snapshots``) from now on; their
        sessions hear of a changed catalog."""
        gateway = desired.gateway
        self.endpoint = gateway.spec.endpoint if gateway is not None else GatewayEndpoint()
        routes = agent_routes(desired)
        skills: dict[str, tuple[ServedSkill, ...]] = {}
        if self.endpoint.skills and snapshots is not None:
            made: dict[tuple[str, str, str, str], ServedSkill] = {}
            for agent in routes:
                snapshot = snapshots.get(agent)
                if snapshot is not None:
                    skills[agent] = served_skills(snapshot, self._digests, made)
        if routes != self.routes or skills != self._skills:
            self.routes = routes
            self._skills = skills
            if self.supervisor is not None:
                self.supervisor.touch()

    @property
    def serves_skills(self) -> bool:
        """Whether the skills extension is on (``Gateway.spec.endpoint.skills``)."""
        return self.endpoint.skills

    def skills(self, agent: str) -> Sequence[ServedSkill]:
        """``agent``'s eligible skills as last applied, in its snapshot's order (none when off)."""
        return self._skills.get(agent, ())

    def surfaces(self, agent: str) -> Sequence[ServerTools] | None:
        """The live listings of ``agent``'s hosted servers (None: no such agent applied)."""
        route = self.routes.get(agent)
        if route is None or self.supervisor is None:
            return None
        supervisor = self.supervisor
        return supervisor.surfaces(name for name in route.servers if supervisor.hosted(name) is not None)

    def merge(self, agent: str, surfaces: Sequence[ServerTools]) -> Sequence[ToolEntry]:
        """``agent``'s catalog over ``surfaces``, as ``tools.json`` is made (merge, then tool policy)."""
        route = self.routes.get(agent)
        return filter_catalog(merge_catalog(surfaces), route.layers) if route is not None else []


def agent_of(rest: str) -> str:
    """The agent a path after ``AGENTS_PATH`` names: ``<agent>``, or ``<agent>/mcp`` for clients
    that only take URLs ending in ``/mcp`` (the MCP Inspector CLI replaces any other path)."""
    agent = rest.strip("/").lower()
    return agent.removesuffix("/mcp")


def _allows(principal: Principal, rest: str) -> bool:
    agent = agent_of(rest)
    return bool(agent) and "/" not in agent and principal.may_reach(agent_access(agent))


@contextlib.asynccontextmanager
async def serve_agent_endpoints(supervisor: Supervisor, routes: AgentRoutes) -> AsyncIterator[AgentEndpoint]:
    """Serve every applied agent at ``AGENTS_PATH/<agent>`` while the context is open."""
    routes.supervisor = supervisor
    endpoint = AgentEndpoint(supervisor, routes, supervisor.change_event)
    served = serve_sdk_server(
        endpoint.server,
        where="the agent endpoint /mcp/agents",
        limits=lambda: endpoint_limits(routes.endpoint.agent_sessions),
        total_setting="Gateway spec.endpoint.agentSessions.maxSessions",
        share_setting="Gateway spec.endpoint.agentSessions.maxSessionsPerConsumer",
        telemetry=supervisor.settings.telemetry,
        endpoint="agent",
    )
    async with served as app, anyio.create_task_group() as tg:
        await tg.start(endpoint.run)

        async def route_app(scope: Scope, receive: Receive, send: Send) -> None:
            agent = agent_of(str(scope.get("path", ""))[len(AGENTS_PATH) :])
            await app({**scope, AGENT_SCOPE_KEY: agent}, receive, send)

        supervisor.mount(AGENTS_PATH, Route(route_app, _allows))
        try:
            yield endpoint
        finally:
            supervisor.unmount(AGENTS_PATH)
            tg.cancel_scope.cancel()
