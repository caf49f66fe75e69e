"""One agent's MCP servers as one MCP server: the aggregated endpoint ``/mcp/agents/<agent>``.

Tools are the agent's merged catalog as OpenClaw builds it (``catalog_of``: the same merge
and tool policy that write ``agents/<id>/tools.json``), so names are ``<server>__<tool>`` with
OpenClaw's collision suffixes, and the ``<server>__resources_*``/``<server>__prompts_*``
utility tools answer as OpenClaw's do. Resources and prompts of the servers whose
``resources_list``/``prompts_list`` entry the agent sees are also merged natively: prompts
named ``<server>__<prompt>`` (the same naming code), resources keeping their URIs (a client
may hold them from tool results) with names prefixed, reads routed by the URI's listing
or template.

Each downstream session gets, per backend server, one upstream session
(``backend.Backend``: the server's ``session_upstream``, so ``perClient`` and ``shared``
hold as on the hosted endpoint), opened on first use and closed when the downstream
session ends. 2026-07-28 requests carry no session: those of one consumer share one
upstream session per backend, closed after ``idle_ttl`` without requests.

Requests pass through raw: the server's error ``code``/``message``/``data`` reach the
client unchanged, progress and logging of a call go to that call, a server's sampling,
elicitation and roots requests go to the client that made the call (a 2026-07-28 client gets
them as an ``InputRequiredResult`` and answers with its retry: ``asking``), and a cancelled call
is cancelled upstream. A call held for an approval dies with its caller: when the client's
HTTP request disconnects, its approval request is withdrawn and nothing is forwarded.
``notifications/tools/list_changed`` (and the resources and prompts
ones) go to the agent's sessions whenever its catalog changes (``change_event``) or a
backend session announces a change.

The agent's eligible skills are served as MCP skills (SEP-2640, ``skills``): ``skills/list``,
``skills/get``, ``resources/directory/read``, and ``skill://`` resources in ``resources/list``
and ``resources/read``; a changed listing is announced as a resources list change.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from clawplane import __version__
from clawplane.runtimes.aggregate import skills as skills_ext
from clawplane.runtimes.aggregate.asking import AskedCalls
from clawplane.runtimes.aggregate.natives import NativeMethods
from clawplane.runtimes.aggregate.sessions import AGENT_SCOPE_KEY, Catalogs, Digest, Downstream
from clawplane.runtimes.aggregate.tools import ToolMethods
from clawplane.runtimes.proxy import HostedDirectory
from clawplane.skills.served import ServedSkill

__all__ = ["AGENT_SCOPE_KEY", "AgentEndpoint", "Catalogs"]


class _Server(Server[Any]):
    skills_on: Callable[[], bool] = staticmethod(lambda: False)
    """Whether the skills extension is advertised (read at each initialize and discover)."""

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        """The capabilities, with the skills extension while ``Gateway.spec.endpoint.skills`` is on."""
        extensions = dict(extensions or self.extensions)
        if self.skills_on():
            extensions[skills_ext.SKILLS_EXTENSION] = dict(skills_ext.EXTENSION_SETTINGS)
        return super().get_capabilities(
            notification_options,
            experimental_capabilities,
            extensions or None,
            protocol_version=protocol_version,
        )

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(
            prompts_changed=True, resources_changed=True, tools_changed=True
        )
        return super().create_initialization_options(options, experimental_capabilities, extensions)


# One class in parts (``sessions`` → ``changes`` → ``forwarding`` → ``tools``/``natives``): the
# method groups share the sessions' state, and the SDK server takes them as one object's handlers.
class AgentEndpoint(ToolMethods, NativeMethods):
    """The aggregated MCP server of every agent of a folder (see the module docstring)."""

    def __init__(
        self,
        directory: HostedDirectory,
        catalogs: Catalogs,
        change_event: Callable[[], anyio.Event],
        *,
        idle_ttl: float = 600.0,
    ) -> None:
        self.directory = directory
        self.catalogs = catalogs
        self.change_event = change_event
        self.idle_ttl = idle_ttl
        self._downstreams: dict[Any, Downstream] = {}
        self._digests: dict[str, Digest] = {}
        self._buses: dict[str, tuple[InMemorySubscriptionBus, ListenHandler]] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._asking: AskedCalls | None = None
        with warnings.catch_warnings():
            # logging/setLevel is deprecated at 2026-07-28 but still part of the handshake era.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server = self._make_server()

    def _make_server(self) -> _Server:
        server = self._sdk_server()
        server.skills_on = lambda: self.catalogs.serves_skills
        server.add_request_handler("skills/list", types.PaginatedRequestParams, self._skills_list)
        server.add_request_handler("skills/get", skills_ext.SkillGetParams, self._skills_get)
        server.add_request_handler(
            "resources/directory/read", skills_ext.DirectoryReadParams, self._directory_read
        )
        return server

    def _sdk_server(self) -> _Server:
        return _Server(
            "clawplane-agent",
            version=__version__,
            title="clawplane agent endpoint",
            instructions=(
                "The MCP tools of one clawplane agent, from all its hosted MCP servers, named "
                "<server>__<tool> as the agent's OpenClaw gateway names them."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_subscriptions_listen=self._on_listen,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_completion=self._complete,
            on_set_logging_level=self._set_level,
        )

    # -- running ---------------------------------------------------------------------------------
    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Hold the backend sessions and follow catalog changes until cancelled."""
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                self._asking = AskedCalls(tg)
                tg.start_soon(self._follow_changes)
                tg.start_soon(self._reap_idle)
                task_status.started()
        finally:
            self._tg = self._asking = None
            for downstream in self._downstreams.values():
                downstream.close()
            self._downstreams.clear()

    def sessions(self, agent: str) -> int:
        """Downstream sessions (and stateless consumers) of ``agent`` holding backend sessions."""
        return sum(1 for d in self._downstreams.values() if d.agent == agent)

    # -- skills (SEP-2640) ------------------------------------------------------------------------
    def _skills_of(self, ctx: ServerRequestContext[Any, Any]) -> Sequence[ServedSkill]:
        agent, consumer = self._agent(ctx)
        self._downstream(ctx, agent, consumer)  # the session hears of list changes from now on
        if not self.catalogs.serves_skills:
            raise MCPError(
                types.METHOD_NOT_FOUND, "skills are not served here (Gateway spec.endpoint.skills is false)"
            )
        self._catalog(agent)  # an unknown agent is an error, as for every other method
        return self.catalogs.skills(agent)

    async def _skills_list(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        return skills_ext.list_result(self._skills_of(ctx), params.cursor)

    async def _skills_get(
        self, ctx: ServerRequestContext[Any, Any], params: skills_ext.SkillGetParams
    ) -> dict[str, Any]:
        return skills_ext.get_result(self._skills_of(ctx), params.uri)

    async def _directory_read(
        self, ctx: ServerRequestContext[Any, Any], params: skills_ext.DirectoryReadParams
    ) -> dict[str, Any]:
        return skills_ext.directory_read(self._skills_of(ctx), params.uri, params.cursor)
