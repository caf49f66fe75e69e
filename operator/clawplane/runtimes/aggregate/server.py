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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import time
import warnings
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import anyio
import anyio.abc
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

from clawplane import __version__
from clawplane.jscompat import js_lower_key
from clawplane.naming import name_tools
from clawplane.runtimes.aggregate.asking import AskedCalls, Outcome, ResumeError
from clawplane.runtimes.aggregate.backend import Backend, BackendError, OnRequest, open_backend
from clawplane.runtimes.calls import utility_result
from clawplane.runtimes.catalog import ServerTools, ToolEntry, ToolKind, build_server_tools
from clawplane.runtimes.proxy.app import PRINCIPAL_SCOPE_KEY
from clawplane.runtimes.proxy.guard import Principal
from clawplane.runtimes.proxy.hosting import SERVER_UNAVAILABLE, HostedDirectory
from clawplane.runtimes.proxy.inputs import STATE_PREFIX
from clawplane.runtimes.proxy.sdkroute import DISCONNECTED_SCOPE_KEY
from clawplane.runtimes.proxy.wire import Message

__all__ = ["AGENT_SCOPE_KEY", "AgentEndpoint", "Catalogs"]

logger = logging.getLogger(__name__)

AGENT_SCOPE_KEY: Final = "clawplane.agent"
"""Where the route puts the agent id (from the path) in the ASGI scope."""
MAX_LIST_PAGES: Final = 50
_LIST_CHANGED: Final[dict[str, type[ToolsListChanged | ResourcesListChanged | PromptsListChanged]]] = {
    "notifications/tools/list_changed": ToolsListChanged,
    "notifications/resources/list_changed": ResourcesListChanged,
    "notifications/prompts/list_changed": PromptsListChanged,
}


class Catalogs(Protocol):
    """Where the endpoint learns an agent's servers and how their tools merge into its catalog."""

    def surfaces(self, agent: str) -> Sequence[ServerTools] | None:
        """The agent's hosted servers as the supervisor last listed them (None: no such agent)."""
        ...

    def merge(self, agent: str, surfaces: Sequence[ServerTools]) -> Sequence[ToolEntry]:
        """The agent's catalog over ``surfaces``: merged as OpenClaw does, filtered by its tool policy."""
        ...


@dataclass(eq=False)
class _Downstream:
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
        for backend in self.backends.values():
            backend.close()
        self.backends.clear()


def _template_pattern(template: str) -> re.Pattern[str]:
    """An RFC 6570 template as a match for the URIs it expands to (``{+x}``/``{/x}`` span slashes)."""
    out, pos = [], 0
    for m in re.finditer(r"\{([^}]*)\}", template):
        out.append(re.escape(template[pos : m.start()]))
        out.append(".*" if m.group(1)[:1] in "+#/" else "[^/]*")
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out) + r"\Z")


def _digest(entries: Sequence[ToolEntry]) -> tuple[str, frozenset[str], frozenset[str]]:
    rows = [(e.name, e.description, e.title, json.dumps(e.input_schema, sort_keys=True, default=str))
            for e in entries]  # fmt: skip
    tools = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    resources = frozenset(e.server for e in entries if e.kind is ToolKind.RESOURCES_LIST)
    prompts = frozenset(e.server for e in entries if e.kind is ToolKind.PROMPTS_LIST)
    return tools, resources, prompts


class _Server(Server[Any]):
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


class AgentEndpoint:
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
        self._downstreams: dict[Any, _Downstream] = {}
        self._digests: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {}
        self._buses: dict[str, tuple[InMemorySubscriptionBus, ListenHandler]] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._asking: AskedCalls | None = None
        with warnings.catch_warnings():
            # logging/setLevel is deprecated at 2026-07-28 but still part of the handshake era.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server = self._make_server()

    def _make_server(self) -> _Server:
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

    async def _follow_changes(self) -> None:
        while True:
            changed = self.change_event()  # taken first: a change while announcing is not missed
            for agent in sorted({d.agent for d in self._downstreams.values()} | set(self._digests)):
                digest = _digest(self._catalog(agent, strict=False))
                before = self._digests.get(agent)
                self._digests[agent] = digest
                if before is None or before == digest:
                    continue
                for downstream in self._downstreams.values():
                    if downstream.agent == agent:
                        downstream.catalog = None
                if before[0] != digest[0]:
                    await self._announce(agent, "notifications/tools/list_changed")
                if before[1] != digest[1]:
                    await self._announce(agent, "notifications/resources/list_changed")
                if before[2] != digest[2]:
                    await self._announce(agent, "notifications/prompts/list_changed")
            await changed.wait()

    async def _announce(self, agent: str, method: str, only: _Downstream | None = None) -> None:
        bus = self._buses.get(agent)
        if bus is not None:
            await bus[0].publish(_LIST_CHANGED[method]())
        for downstream in [only] if only is not None else list(self._downstreams.values()):
            if downstream.agent != agent or downstream.connection is None:
                continue
            connection = downstream.connection()
            if connection is not None:
                await connection.notify(method, None)

    async def _updated(self, downstream: _Downstream, params: dict[str, Any]) -> None:
        uri = params.get("uri")
        if not isinstance(uri, str):
            return
        bus = self._buses.get(downstream.agent)
        if bus is not None:
            await bus[0].publish(ResourceUpdated(uri))
        connection = downstream.connection() if downstream.connection is not None else None
        if connection is not None:
            await connection.notify("notifications/resources/updated", params)

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
        self._digests.setdefault(agent, _digest(entries))
        return entries

    async def _session_catalog(
        self, ctx: ServerRequestContext[Any, Any], downstream: _Downstream
    ) -> Sequence[ToolEntry]:
        """The agent's catalog over this session's own upstream sessions (a perClient process may
        have tools the supervisor's does not), merged and filtered by the same code."""
        if downstream.catalog is not None:
            return downstream.catalog
        surfaces = self.catalogs.surfaces(downstream.agent)
        if surfaces is None:
            raise MCPError(
                types.INVALID_PARAMS, f'no agent "{downstream.agent}" has been applied in this folder'
            )
        self._catalog(downstream.agent)
        listed: list[ServerTools] = []
        complete = True
        for base in surfaces:
            try:
                tools = await self._list_all(ctx, downstream, base.server, "tools/list", "tools")
            except MCPError as exc:
                # An unavailable server contributes nothing for now, as in OpenClaw; asked again next time.
                logger.info(
                    "agent %s: %s is left out of the listing: %s", downstream.agent, base.server, exc.message
                )
                complete = False
                continue
            listed.append(
                build_server_tools(
                    base.server, base.safe_server, tools, launch=base.launch, tool_filter=base.tool_filter,
                    resources=base.resources, prompts=base.prompts, list_changed=base.list_changed,
                )
            )  # fmt: skip
        catalog = self.catalogs.merge(downstream.agent, listed)
        if complete:
            downstream.catalog = catalog
        return catalog

    def _downstream(self, ctx: ServerRequestContext[Any, Any], agent: str, consumer: str) -> _Downstream:
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
            downstream = self._downstreams[key] = _Downstream(key, agent, consumer, ref)
        downstream.used = time.monotonic()
        return downstream

    async def _backend(self, downstream: _Downstream, server: str) -> Backend:
        backend = downstream.backends.get(server)
        if backend is not None and backend._mux is not None:
            return backend
        lock = downstream.opening.setdefault(server, anyio.Lock())
        async with lock:
            backend = downstream.backends.get(server)
            if backend is not None and backend._mux is not None:
                return backend
            hosted = self.directory.hosted(server)
            if hosted is None or self._tg is None:
                raise BackendError(
                    SERVER_UNAVAILABLE, f'MCP server "{server}" is not hosted here (or stopped)'
                )
            where = f"/mcp/agents/{downstream.agent}"
            backend = await open_backend(
                self._tg,
                hosted,
                f"{downstream.consumer} via {where}",
                caller=downstream.consumer,
                endpoint=where,
                on_notice=lambda msg: self._notice(downstream, msg),
            )
            if downstream.log_level is not None:
                with contextlib.suppress(BackendError):  # a server without logging ignores it
                    await backend.request("logging/setLevel", {"level": downstream.log_level})
            downstream.backends[server] = backend
            return backend

    def _notice(self, downstream: _Downstream, msg: Message) -> None:
        method = msg.get("method")
        if method == "notifications/resources/updated" and self._tg is not None:
            raw = msg.get("params")
            params: dict[str, Any] = raw if isinstance(raw, dict) else {}
            self._tg.start_soon(self._updated, downstream, params)
        if method == "notifications/tools/list_changed":
            downstream.catalog = None
        if method in _LIST_CHANGED and self._tg is not None:
            # Sent from the relay task: the client's stream must not block the backend's reader.
            self._tg.start_soon(self._announce, downstream.agent, str(method), downstream)

    async def _request(
        self,
        ctx: ServerRequestContext[Any, Any],
        downstream: _Downstream,
        server: str,
        method: str,
        params: dict[str, Any],
        *,
        asked: OnRequest | None = None,
    ) -> dict[str, Any]:
        """One request to one backend, with the call's progress, logging and server requests relayed
        (to ``asked`` instead when given: a 2026-07-28 call, whose client is asked by ``asking``)."""
        token = (ctx.meta or {}).get("progress_token") if ctx.meta is not None else None
        if token is not None:
            params = {**params, "_meta": {"progressToken": token}}

        async def on_message(msg: Message) -> None:
            raw = msg.get("params")
            p: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if msg.get("method") == "notifications/progress" and token is not None:
                await ctx.session.report_progress(p.get("progress", 0), p.get("total"), p.get("message"))
            elif msg.get("method") == "notifications/message":
                await ctx.session.send_log_message(
                    p.get("level", "info"), p.get("data"), p.get("logger"), related_request_id=ctx.request_id
                )

        async def on_request(msg: Message) -> Message:
            try:
                result = await ctx.session._request_outbound.send_raw_request(
                    str(msg.get("method")), msg.get("params")
                )
            except MCPError as exc:
                error = exc.error.model_dump(mode="json", exclude_none=True)
                return {"jsonrpc": "2.0", "id": msg.get("id"), "error": error}
            except Exception as exc:  # no back-channel (2026-07-28), or the client went away
                why = f"the client cannot answer {msg.get('method')}: {exc}"
                return {"jsonrpc": "2.0", "id": msg.get("id"), "error": {"code": -32601, "message": why}}
            return {"jsonrpc": "2.0", "id": msg.get("id"), "result": result}

        async def relayed(msg: Message) -> None:
            with contextlib.suppress(Exception):  # a parked call's first exchange has ended
                await on_message(msg)

        scope = getattr(ctx.request, "scope", None)
        gone = scope.get(DISCONNECTED_SCOPE_KEY) if isinstance(scope, Mapping) else None
        try:
            backend = await self._backend(downstream, server)
            return await backend.request(
                method, params, on_message=on_message if asked is None else relayed,
                on_request=on_request if asked is None else asked,
                gone=gone if isinstance(gone, anyio.Event) else None,
            )  # fmt: skip
        except BackendError as exc:
            raise MCPError(exc.code, exc.message, exc.data) from None
        finally:
            downstream.used = time.monotonic()

    async def _list_all(
        self, ctx: ServerRequestContext[Any, Any], downstream: _Downstream, server: str, method: str, key: str
    ) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            result = await self._request(
                ctx, downstream, server, method, {"cursor": cursor} if cursor else {}
            )
            page = result.get(key)
            items.extend(i for i in page if isinstance(i, dict)) if isinstance(page, list) else None
            cursor = result.get("nextCursor") if isinstance(result.get("nextCursor"), str) else None
            if not cursor:
                break
        return items

    # -- tools -----------------------------------------------------------------------------------
    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        agent, consumer = self._agent(ctx)
        self._catalog(agent)
        downstream = self._downstream(ctx, agent, consumer)  # it hears of list changes from now on
        return types.ListToolsResult(tools=[_tool(e) for e in await self._session_catalog(ctx, downstream)])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        agent, consumer = self._agent(ctx)
        self._catalog(agent)
        downstream = self._downstream(ctx, agent, consumer)
        entry = next((e for e in await self._session_catalog(ctx, downstream) if e.name == params.name), None)
        if entry is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        arguments = dict(params.arguments or {})
        if entry.kind is ToolKind.TOOL and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await self._call_asking(ctx, downstream, entry, params, consumer)
        if entry.kind is ToolKind.TOOL:
            result = await self._request(
                ctx, downstream, entry.server, "tools/call", {"name": entry.tool, "arguments": arguments}
            )
            return types.CallToolResult.model_validate(result, by_name=False)
        return await self._utility(ctx, downstream, entry, arguments)

    async def _call_asking(
        self,
        ctx: ServerRequestContext[Any, Any],
        downstream: _Downstream,
        entry: ToolEntry,
        params: types.CallToolRequestParams,
        consumer: str,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """A 2026-07-28 call: the backend's questions become ``InputRequiredResult`` (``asking``)."""
        asking = self._asking
        if asking is None:
            raise MCPError(types.INTERNAL_ERROR, "the agent endpoint is stopping")
        state = params.request_state
        if state is not None and state.startswith(STATE_PREFIX):
            try:
                call = asking.resume(state, consumer)
            except ResumeError as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from None
            question = call.question
            assert question is not None
            answer = (params.input_responses or {}).get(Outcome(question=question).key)
            if answer is None:  # asked again: the same question
                return _input_required(Outcome(question=question), asking.park(call, question))
            response = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
            call.answer({"jsonrpc": "2.0", "id": question["id"], "result": response})
        else:
            request = {"name": entry.tool, "arguments": dict(params.arguments or {})}
            declared = ctx.session.client_capabilities
            capabilities = {} if declared is None else declared.model_dump(by_alias=True, exclude_none=True)

            def run(asked: OnRequest) -> Awaitable[dict[str, Any]]:
                return self._request(ctx, downstream, entry.server, "tools/call", request, asked=asked)

            call = asking.start(run, consumer, capabilities)
        try:
            outcome = await call.next()
        except BaseException:  # the client left before an answer or a question: the call ends upstream
            call.scope.cancel()
            raise
        if outcome.question is not None:
            return _input_required(outcome, asking.park(call, outcome.question))
        if outcome.error is not None:
            raise outcome.error
        return types.CallToolResult.model_validate(outcome.result, by_name=False)

    async def _utility(
        self,
        ctx: ServerRequestContext[Any, Any],
        downstream: _Downstream,
        entry: ToolEntry,
        args: dict[str, Any],
    ) -> types.CallToolResult:
        """A ``resources_*``/``prompts_*`` entry, answered as OpenClaw's utility tools are."""
        server = entry.server
        try:
            if entry.kind is ToolKind.RESOURCES_LIST:
                value = {
                    "resources": await self._list_all(ctx, downstream, server, "resources/list", "resources")
                }
            elif entry.kind is ToolKind.PROMPTS_LIST:
                value = {"prompts": await self._list_all(ctx, downstream, server, "prompts/list", "prompts")}
            elif entry.kind is ToolKind.RESOURCES_READ:
                uri = args.get("uri")
                if not isinstance(uri, str) or not uri.strip():
                    return _tool_error("uri is required")
                value = await self._request(ctx, downstream, server, "resources/read", {"uri": uri.strip()})
            else:
                name = args.get("name")
                if not isinstance(name, str) or not name.strip():
                    return _tool_error("name is required")
                arguments = args.get("arguments") if isinstance(args.get("arguments"), dict) else None
                request = {"name": name.strip(), **({"arguments": arguments} if arguments else {})}
                value = await self._request(ctx, downstream, server, "prompts/get", request)
        except MCPError as exc:
            return _tool_error(exc.message)
        result = utility_result(value)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=block["text"]) for block in result.content],
            structured_content=result.structured_content,
        )

    # -- resources -------------------------------------------------------------------------------
    def _servers_of(self, entries: Sequence[ToolEntry], kind: ToolKind) -> list[ToolEntry]:
        return [e for e in entries if e.kind is kind]

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        out: list[types.Resource] = []
        for entry in self._servers_of(await self._session_catalog(ctx, downstream), ToolKind.RESOURCES_LIST):
            for item in await self._list_all(ctx, downstream, entry.server, "resources/list", "resources"):
                uri = item.get("uri")
                if not isinstance(uri, str):
                    continue
                downstream.resources.setdefault(uri, entry.server)
                name = f"{entry.safe_server}__{item.get('name') or uri}"
                out.append(types.Resource.model_validate({**item, "name": name}, by_name=False))
        return types.ListResourcesResult(resources=out)

    async def _list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        out: list[types.ResourceTemplate] = []
        downstream.templates.clear()
        for entry in self._servers_of(await self._session_catalog(ctx, downstream), ToolKind.RESOURCES_LIST):
            listed = await self._list_all(
                ctx, downstream, entry.server, "resources/templates/list", "resourceTemplates"
            )
            for item in listed:
                template = item.get("uriTemplate")
                if not isinstance(template, str):
                    continue
                downstream.templates.append((_template_pattern(template), entry.server, template))
                name = f"{entry.safe_server}__{item.get('name') or template}"
                out.append(types.ResourceTemplate.model_validate({**item, "name": name}, by_name=False))
        return types.ListResourceTemplatesResult(resource_templates=out)

    async def _owner(
        self, ctx: ServerRequestContext[Any, Any], downstream: _Downstream, uri: str, servers: list[str]
    ) -> str | None:
        if len(servers) == 1:
            return servers[0]
        for attempt in range(2):
            owner = downstream.resources.get(uri)
            if owner is None:
                owner = next((s for pattern, s, _ in downstream.templates if pattern.match(uri)), None)
            if owner in servers or attempt:
                return owner if owner in servers else None
            # Not listed in this session yet: list, then look again.
            await self._list_resources(ctx, None)
            await self._list_templates(ctx, None)
        return None

    async def _resource_owner(
        self, ctx: ServerRequestContext[Any, Any], downstream: _Downstream, uri: str
    ) -> str:
        """The server a URI belongs to (listed by it, or matching its template), else INVALID_PARAMS."""
        catalog = await self._session_catalog(ctx, downstream)
        servers = [e.server for e in self._servers_of(catalog, ToolKind.RESOURCES_LIST)]
        owner = await self._owner(ctx, downstream, uri, servers)
        if owner is None:
            raise MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})
        return owner

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        uri = str(params.uri)
        owner = await self._resource_owner(ctx, downstream, uri)
        result = await self._request(ctx, downstream, owner, "resources/read", {"uri": uri})
        return types.ReadResourceResult.model_validate(result, by_name=False)

    # -- prompts ---------------------------------------------------------------------------------
    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        out: list[types.Prompt] = []
        taken: set[str] = set()
        downstream.prompts.clear()
        for entry in self._servers_of(await self._session_catalog(ctx, downstream), ToolKind.PROMPTS_LIST):
            found = await self._list_all(ctx, downstream, entry.server, "prompts/list", "prompts")
            listed = [p for p in found if isinstance(p.get("name"), str) and p["name"].strip()]
            named = name_tools(entry.safe_server, [p["name"].strip() for p in listed], reserved=taken)
            for item, safe in zip(listed, named, strict=True):
                taken.add(js_lower_key(safe.safe))
                downstream.prompts[safe.safe] = (entry.server, item["name"].strip())
                out.append(types.Prompt.model_validate({**item, "name": safe.safe}, by_name=False))
        return types.ListPromptsResult(prompts=out)

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        if params.name not in downstream.prompts:
            await self._list_prompts(ctx, None)
        found = downstream.prompts.get(params.name)
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        server, raw = found
        request: dict[str, Any] = {"name": raw}
        if params.arguments:
            request["arguments"] = dict(params.arguments)
        result = await self._request(ctx, downstream, server, "prompts/get", request)
        return types.GetPromptResult.model_validate(result, by_name=False)

    async def _subscription(
        self, ctx: ServerRequestContext[Any, Any], uri: str, method: str
    ) -> types.EmptyResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        owner = await self._resource_owner(ctx, downstream, uri)
        try:
            backend = await self._backend(downstream, owner)
            # On the backend session's own link: the subscription lasts as long as the session.
            await backend.session_request(method, {"uri": uri})
        except BackendError as exc:
            raise MCPError(exc.code, exc.message, exc.data) from None
        return types.EmptyResult()

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        return await self._subscription(ctx, str(params.uri), "resources/subscribe")

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        return await self._subscription(ctx, str(params.uri), "resources/unsubscribe")

    async def _complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """Completion of a prompt's argument (by its prefixed name) or a resource template's (by URI)."""
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        request = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        request.pop("_meta", None)
        ref = request.get("ref", {})
        if ref.get("type") == "ref/prompt":
            if ref.get("name") not in downstream.prompts:
                await self._list_prompts(ctx, None)
            found = downstream.prompts.get(str(ref.get("name")))
            if found is None:
                raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {ref.get('name')}")
            server, raw = found
            request["ref"] = {**ref, "name": raw}
        else:
            uri = str(ref.get("uri", ""))
            if not downstream.templates:
                await self._list_templates(ctx, None)
            # A template reference names the template itself, not a URI it expands to.
            server = next((s for pattern, s, text in downstream.templates if text == uri), None) or (
                await self._resource_owner(ctx, downstream, uri)
            )
        result = await self._request(ctx, downstream, server, "completion/complete", request)
        return types.CompleteResult.model_validate(result, by_name=False)

    async def _set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        agent, consumer = self._agent(ctx)
        downstream = self._downstream(ctx, agent, consumer)
        downstream.log_level = str(params.level)
        for server in list(downstream.backends):
            with contextlib.suppress(MCPError):  # a server without logging ignores it
                await self._request(
                    ctx, downstream, server, "logging/setLevel", {"level": downstream.log_level}
                )
        return types.EmptyResult()

    # -- 2026-07-28 change streams ---------------------------------------------------------------
    async def _on_listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        agent, _ = self._agent(ctx)
        self._catalog(agent)
        if agent not in self._buses:
            bus = InMemorySubscriptionBus()
            self._buses[agent] = (bus, ListenHandler(bus))
        return await self._buses[agent][1](ctx, params)



_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)


def _input_required(outcome: Outcome, state: str) -> types.InputRequiredResult:
    """The ``InputRequiredResult`` that asks the client the backend's question."""
    question = outcome.question
    assert question is not None
    asked = {"method": question["method"], "params": question.get("params") or {}}
    request = _INPUT_REQUEST.validate_python(asked)
    return types.InputRequiredResult(input_requests={outcome.key: request}, request_state=state)

def _tool(entry: ToolEntry) -> types.Tool:
    data: dict[str, Any] = {
        "name": entry.name,
        "description": entry.description,
        "inputSchema": dict(entry.input_schema) or {"type": "object"},
    }
    if entry.title:
        data["title"] = entry.title
    if entry.annotations:
        data["annotations"] = dict(entry.annotations)
    return types.Tool.model_validate(data, by_name=False)


def _tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)
