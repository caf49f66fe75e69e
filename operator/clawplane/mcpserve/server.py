"""clawplane's control plane as one MCP server (the SDK's low-level ``Server``, both protocol eras).

Tools are in ``tools``; resources are ``clawplane://status``, ``clawplane://plan``,
``clawplane://events`` and ``clawplane://agents/<id>/prompt`` (JSON, or the prompt text).
A subscribed session gets ``notifications/resources/updated`` when a resource's content
changes: handshake-era sessions through ``resources/subscribe``, 2026-07-28 ones through
``subscriptions/listen``. Every new event also updates ``clawplane://events``, and for
handshake-era subscribers the notification carries the event itself in
``_meta["dev.clawplane/event"]``. Content is recomputed when an event arrives or a file of
the folder changes, at most every ``REFRESH_S`` seconds, and only while someone listens.
Events written by other processes are polled for only while someone subscribes or listens:
an idle supervisor must not wake once a second for an audience it does not have.

The caller is the token's principal on HTTP (its scopes decide what it may call) and the
local user on stdio. Costly questions (validate, plan, the folder's resources, agents' catalogs,
the plan and prompt resources) are answered by the query worker, off the event loop, within
the caller's share of it; a caller past its share, or a full queue, gets the JSON-RPC error
``TOO_MANY_REQUESTS`` with ``data.retryAfterMs``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from typing import Any, Final

import anyio
import jsonschema
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp.shared.exceptions import MCPError

from clawplane import __version__
from clawplane.events import MAX_PAGE, MAX_WAIT_MS, Event
from clawplane.mcpserve.tools import READ, TOOLS, Caller, ToolDef
from clawplane.reconcile.queries import MAX_DOCUMENTS, Answer, BusyError, FolderQueries, QueryError
from clawplane.runtimes import Principal
from clawplane.runtimes.proxy import PRINCIPAL_SCOPE_KEY

__all__ = ["EVENT_META_KEY", "PRINCIPAL_SCOPE_KEY", "TOO_MANY_REQUESTS", "ControlPlaneServer"]

logger = logging.getLogger(__name__)

EVENT_META_KEY: Final = "dev.clawplane/event"
TOO_MANY_REQUESTS: Final = -32029
"""JSON-RPC error of a costly question refused for now; ``data.retryAfterMs`` says when to ask again."""
REFRESH_S: Final = 0.5
STATUS, PLAN, EVENTS = "clawplane://status", "clawplane://plan", "clawplane://events"
PROMPT = "clawplane://agents/{agent}/prompt"
_BY_NAME = {t.name: t for t in TOOLS}
_CHECKERS = {t.name: jsonschema.Draft202012Validator(t.input_schema) for t in TOOLS}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


class _Server(Server[Any]):
    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        # The resource list changes with the folder's agents: say so in the handshake era too.
        options = notification_options or NotificationOptions(resources_changed=True)
        return super().create_initialization_options(options, experimental_capabilities, extensions)


class ControlPlaneServer:
    """The control-plane MCP server of one folder (see the module docstring)."""

    def __init__(self, queries: FolderQueries, *, local: Caller | None = None) -> None:
        self.queries = queries
        self.local = local
        self.bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self.bus)
        self._listening = 0
        self._subscribers: dict[str, dict[int, ServerSession]] = {}
        self._sessions: dict[int, ServerSession] = {}
        self._digests: dict[str, str] = {}
        self._agents: tuple[str, ...] | None = None
        self._dirty = anyio.Event()
        self._interest = anyio.Event()
        folder = queries.ws.folder
        self.server = _Server(
            "clawplane",
            version=__version__,
            title="clawplane control plane",
            instructions=(
                f"The clawplane control plane of {folder}: what runs (status), what the folder declares, "
                "validation and dry-run plans, agents' tools and skills, the event queue, pending approvals "
                "(approvals_list / approvals_respond) and the audit log."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_subscriptions_listen=self._on_listen,
        )

    # -- who calls -----------------------------------------------------------------------------
    def _caller(self, ctx: ServerRequestContext[Any, Any]) -> Caller:
        request = ctx.request
        scope = getattr(request, "scope", None)
        principal = scope.get(PRINCIPAL_SCOPE_KEY) if isinstance(scope, Mapping) else None
        if isinstance(principal, Principal):
            return Caller(principal.consumer, principal.scopes)
        if self.local is not None and request is None:
            return self.local
        return Caller("anonymous", frozenset())

    def _seen(self, ctx: ServerRequestContext[Any, Any]) -> None:
        key = id(getattr(ctx.session, "_connection", ctx.session))
        self._sessions[key] = ctx.session

    # -- tools ---------------------------------------------------------------------------------
    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._seen(ctx)
        return types.ListToolsResult(tools=[_tool(t) for t in TOOLS])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self._seen(ctx)
        tool = _BY_NAME.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        caller = self._caller(ctx)
        missing = {READ, tool.scope} - caller.scopes
        if missing:
            return _error(
                f'the token of "{caller.who}" lacks the {" and ".join(sorted(missing))} scope(s) {tool.name} '
                "needs; the `cli` token has read and approve, `reader` only read (`clawplane token show`)"
            )
        arguments = dict(params.arguments or {})
        documents = arguments.get("documents")
        if isinstance(documents, list) and len(documents) > MAX_DOCUMENTS:  # before a schema walks them all
            return _error(
                f"invalid arguments for {tool.name} (documents): {len(documents)} documents, at most "
                f"{MAX_DOCUMENTS}; put several YAML documents in one text (separated by ---)"
            )
        error = jsonschema.exceptions.best_match(_CHECKERS[tool.name].iter_errors(arguments))
        if error is not None:
            where = ".".join(str(p) for p in error.absolute_path) or "arguments"
            return _error(f"invalid arguments for {tool.name} ({where}): {error.message}")
        try:
            result = await tool.handler(self.queries, arguments, caller)
        except BusyError as exc:
            raise _too_many(exc) from None
        except QueryError as exc:
            return _error(str(exc))
        if isinstance(result, Answer):  # the worker's text, as written there: nothing to re-encode here
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=result.text)], structured_content=result.value
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=_json(result))], structured_content=result
        )

    # -- resources -----------------------------------------------------------------------------
    async def _agent_ids(self, who: str | None = None) -> tuple[str, ...]:
        try:
            return await self.queries.agent_ids(who=who)
        except BusyError:
            if who is not None:
                raise
            return self._agents or ()  # not looked at now: as last seen
        except QueryError:  # no agents to list now; the status resource says why
            return ()

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self._seen(ctx)
        try:
            agents = await self._agent_ids(self._caller(ctx).who)
        except BusyError as exc:
            raise _too_many(exc) from None
        fixed = [
            types.Resource(uri=STATUS, name="status", description="What runs now (the status tool's answer).",
                           mime_type="application/json"),
            types.Resource(uri=PLAN, name="plan", description="What an apply would do now (the plan tool).",
                           mime_type="application/json"),
            types.Resource(uri=EVENTS, name="events", description="The newest reconcile events; subscribe to "
                           "be told of each new one.", mime_type="application/json"),
        ]  # fmt: skip
        prompts = [
            types.Resource(uri=PROMPT.format(agent=a), name=f"{a} prompt", mime_type="text/plain",
                           description=f"The skills prompt text of agent {a}.")
            for a in agents
        ]  # fmt: skip
        return types.ListResourcesResult(resources=[*fixed, *prompts])

    async def _list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[
            types.ResourceTemplate(uri_template=PROMPT, name="agent prompt", mime_type="text/plain",
                                   description="The skills prompt text of one agent.")
        ])  # fmt: skip

    async def _content(self, uri: str, who: str | None = None) -> tuple[str, str]:
        """(mime type, text) of a resource (``who``: the reader, whose share a costly one counts in)."""
        if uri == STATUS:
            return "application/json", _json(await self.queries.status())
        if uri == PLAN:
            return "application/json", (await self.queries.plan(who=who)).text
        if uri == EVENTS:
            head = self.queries.oversight.events.head()
            return "application/json", _json(await self.queries.events(max(0, head - 20), 0, 20))
        prefix, suffix = "clawplane://agents/", "/prompt"
        if uri.startswith(prefix) and uri.endswith(suffix):
            agent = uri[len(prefix) : -len(suffix)]
            answer = await self.queries.agent_skills(agent, "prompt", who=who)
            return "text/plain", str(answer.value["text"])
        raise MCPError(types.INVALID_PARAMS, f"Unknown resource: {uri}")

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        self._seen(ctx)
        caller = self._caller(ctx)
        if READ not in caller.scopes:
            raise MCPError(types.INVALID_REQUEST, f'the token of "{caller.who}" lacks the read scope')
        try:
            mime, text = await self._content(str(params.uri), caller.who)
        except BusyError as exc:
            raise _too_many(exc) from None
        except QueryError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=str(params.uri), mime_type=mime, text=text)]
        )

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        self._seen(ctx)
        key = id(getattr(ctx.session, "_connection", ctx.session))
        uri = str(params.uri)
        if uri not in self._digests and uri != EVENTS:  # changes are told relative to now
            self._digests[uri] = await self._digest_of(uri)
        self._subscribers.setdefault(uri, {})[key] = ctx.session
        self._dirty.set()
        self._interest.set()
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        key = id(getattr(ctx.session, "_connection", ctx.session))
        self._subscribers.get(str(params.uri), {}).pop(key, None)
        return types.EmptyResult()

    async def _on_listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        for uri in [STATUS, PLAN, *(PROMPT.format(agent=a) for a in await self._agent_ids())]:
            if uri not in self._digests:  # changes are told relative to the acknowledged listen
                self._digests[uri] = await self._digest_of(uri)
        self._listening += 1
        self._dirty.set()
        self._interest.set()
        try:
            return await self._listen(ctx, params)
        finally:
            self._listening -= 1

    # -- change notifications ------------------------------------------------------------------
    def changed(self) -> None:
        """Something may have changed (an event, a file of the folder): look again soon."""
        self._dirty.set()

    def on_event(self, event: Event) -> None:
        """An event was published in this process."""
        self._dirty.set()

    def interested(self) -> bool:
        """Whether any session subscribes to a resource or listens for changes."""
        return self._listening > 0 or any(self._subscribers.values())

    async def run_updates(self) -> None:
        """Recompute subscribed resources on every change and notify who listens; until cancelled,
        which also ends the query worker."""
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._follow_events)
                while True:
                    await self._dirty.wait()
                    self._dirty = anyio.Event()
                    if self._subscribers or self._listening:
                        await self._refresh()
                    await anyio.sleep(REFRESH_S)  # coalesce a burst of changes into one refresh
        finally:
            with anyio.CancelScope(shield=True):
                await self.queries.aclose()

    async def _follow_events(self) -> None:
        events = self.queries.oversight.events
        while True:
            if not self.interested():
                self._interest = anyio.Event()
                await self._interest.wait()
            # Subscribers are told of events from the moment someone is interested, not before.
            cursor = events.head()
            while self.interested():
                page = await events.wait(cursor, timeout=MAX_WAIT_MS / 1000, limit=MAX_PAGE)
                for event in page.events:
                    await self._notify(EVENTS, meta={EVENT_META_KEY: event.to_dict()})
                if page.events or page.gap is not None:
                    self._dirty.set()
                cursor = page.next_cursor

    async def _refresh(self) -> None:
        agents = await self._agent_ids()
        if self._agents is not None and agents != self._agents:
            await self.bus.publish(ResourcesListChanged())
            for key, session in list(self._sessions.items()):
                try:
                    await session.send_resource_list_changed()
                except Exception:  # the session is gone
                    self._sessions.pop(key, None)
        self._agents = agents
        for uri in [STATUS, PLAN, *(PROMPT.format(agent=a) for a in agents)]:
            digest = await self._digest_of(uri)
            if self._digests.get(uri, digest) != digest:
                await self._notify(uri)
            self._digests[uri] = digest

    async def _digest_of(self, uri: str) -> str:
        """What a resource holds now, as a digest that ignores when it was computed."""
        try:
            _, text = await self._content(uri)
        except BusyError:  # not looked at now: as it was, until the next look
            return self._digests.get(uri, "")
        except (QueryError, MCPError) as exc:
            return _digest(f"unavailable: {exc}")
        if uri == PLAN:  # a plan is stamped with its creation time; what it does is its hash
            doc = json.loads(text)
            return _digest(_json([doc["planHash"], doc["held"]]))
        return _digest(text)

    async def _notify(self, uri: str, meta: dict[str, Any] | None = None) -> None:
        await self.bus.publish(ResourceUpdated(uri))
        params = types.ResourceUpdatedNotificationParams(uri=uri, _meta=meta)
        note = types.ResourceUpdatedNotification(params=params)
        for key, session in list(self._subscribers.get(uri, {}).items()):
            try:
                await session.send_notification(note)
            except Exception:  # the session is gone: forget it
                self._subscribers[uri].pop(key, None)


def _tool(t: ToolDef) -> types.Tool:
    return types.Tool(
        name=t.name,
        title=t.title,
        description=t.description,
        input_schema=t.input_schema,
        output_schema=t.output_schema,
        annotations=types.ToolAnnotations(
            title=t.title, read_only_hint=t.read_only, destructive_hint=False, open_world_hint=False
        ),
    )


def _too_many(exc: BusyError) -> MCPError:
    """The JSON-RPC error of a question refused for now, with when to retry."""
    retry_ms = round(exc.retry_after * 1000)
    return MCPError(TOO_MANY_REQUESTS, str(exc), {"retryAfterMs": retry_ms, "limit": exc.limit})


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)
