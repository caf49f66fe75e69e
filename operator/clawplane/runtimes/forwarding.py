"""A low-level MCP server that answers every request from a runtime's live connection.

The bridge serves one ``ForwardingServer`` per hosted server. Requests (tools, resources,
resource templates, prompts, completions) are forwarded to the runtime's current
connection, so a restarted server is picked up without clients noticing more than a failed
call; ``tools/call`` goes through the runtime's failure accounting, so a paused server
fails fast here too, and ``toolFilter`` hides and refuses filtered tools. Change
notifications from the server are re-announced to every client: on the session for
handshake-era clients, on ``subscriptions/listen`` streams for 2026-07-28 clients.
Capabilities mirror the upstream server's, with ``listChanged`` on for what is forwarded.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

import mcp_types as types
from mcp.server.connection import Connection as ServerConnection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ServerEvent, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from clawplane.models.mcpserver import ToolFilter
from clawplane.naming import is_tool_allowed
from clawplane.runtimes.catalog import ServerTools
from clawplane.runtimes.changes import Change
from clawplane.runtimes.connection import Connection
from clawplane.runtimes.errors import McpRuntimeError, RequestFailedError, RequestTimeoutError

__all__ = ["ForwardingServer", "Upstream"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

_HANDSHAKES = frozenset({"initialize", "server/discover"})
_NOTIFICATIONS: dict[Change, str] = {
    Change.TOOLS: "notifications/tools/list_changed",
    Change.PROMPTS: "notifications/prompts/list_changed",
    Change.RESOURCES: "notifications/resources/list_changed",
}
_EVENTS: dict[Change, ServerEvent] = {
    Change.TOOLS: ToolsListChanged(),
    Change.PROMPTS: PromptsListChanged(),
    Change.RESOURCES: ResourcesListChanged(),
}


class Upstream(Protocol):
    """What the bridge needs from a runtime (``ServerRuntime`` is one)."""

    name: str

    @property
    def tools(self) -> ServerTools:
        """The server's current exposed tools."""
        ...

    def require_connection(self) -> Connection:
        """The live connection, or raise ``ServerUnavailableError``."""
        ...

    async def wait_connection(self, timeout: float | None = None) -> Connection:
        """The live connection, waiting while the server (re)starts (default: its connect timeout)."""
        ...

    async def guard(self, call: Awaitable[T]) -> T:
        """Run a request, counting its failure or success towards pausing."""
        ...


def _mcp_error(exc: McpRuntimeError) -> MCPError:
    """The JSON-RPC error a client should see for a runtime error."""
    if isinstance(exc, RequestTimeoutError):
        return MCPError(code=types.REQUEST_TIMEOUT, message=str(exc))
    code = exc.code if isinstance(exc, RequestFailedError) and exc.code is not None else types.INTERNAL_ERROR
    return MCPError(code=code, message=str(exc))


class ForwardingServer(Server[Any]):
    """Serves one upstream server's tools, resources and prompts to any number of clients."""

    def __init__(
        self, name: str, resolve: Callable[[], Upstream | None], *, wait_seconds: float = 30.0
    ) -> None:
        self._resolve = resolve
        self._wait_seconds = wait_seconds
        self._bus = InMemorySubscriptionBus()
        # Handshake-era client connections (weak: a closed connection simply drops out).
        self._connections: weakref.WeakSet[ServerConnection] = weakref.WeakSet()
        super().__init__(
            name,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_completion=self._complete,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        self.middleware.append(self._track_session)

    # -- announcing changes ----------------------------------------------------------------
    async def announce(self, change: Change) -> None:
        """Tell every connected client that a list changed."""
        await self._bus.publish(_EVENTS[change])
        for connection in list(self._connections):
            try:
                await connection.notify(_NOTIFICATIONS[change], None)
            except Exception:  # fan-out boundary: a gone client must not stop the others
                logger.debug("dropping a client that cannot be notified", exc_info=True)
                self._connections.discard(connection)

    async def _track_session(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method in _HANDSHAKES:
            # Capabilities and identity come from the upstream server: let it finish starting.
            upstream = self._resolve()
            if upstream is not None:
                with contextlib.suppress(McpRuntimeError):
                    await upstream.wait_connection()
        # Handshake-era clients get notifications on their connection; 2026-07-28 ones listen.
        # The per-request session object is short-lived; its connection is not (no public accessor).
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._connections.add(ctx.session._connection)
        return await call_next(ctx)

    # -- identity and capabilities ---------------------------------------------------------
    def _connection(self) -> Connection | None:
        upstream = self._resolve()
        if upstream is None:
            return None
        with contextlib.suppress(McpRuntimeError):
            return upstream.require_connection()
        return None

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        """The upstream server's capabilities, with list changes announced for all lists."""
        conn = self._connection()
        upstream = conn.capabilities if conn is not None else types.ServerCapabilities()
        return types.ServerCapabilities(
            tools=types.ToolsCapability(list_changed=True),
            resources=types.ResourcesCapability(list_changed=True) if upstream.resources else None,
            prompts=types.PromptsCapability(list_changed=True) if upstream.prompts else None,
            completions=types.CompletionsCapability() if upstream.completions else None,
        )

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """Identity and instructions of the upstream server, as of now."""
        conn = self._connection()
        info = conn.server_info if conn is not None else None
        return InitializationOptions(
            server_name=info.name if info else self.name,
            server_version=info.version if info else "",
            capabilities=self.get_capabilities(),
            instructions=conn.instructions if conn is not None else None,
        )

    # -- forwarding ------------------------------------------------------------------------
    def _upstream(self) -> Upstream:
        upstream = self._resolve()
        if upstream is None:
            raise MCPError(code=types.INTERNAL_ERROR, message=f'MCP server "{self.name}" is not running')
        return upstream

    async def _forward(
        self, what: str, call: Callable[[Connection], Awaitable[T]], *, guarded: bool = False
    ) -> T:
        upstream = self._upstream()
        try:
            # A client that connects while the server is still starting waits for it.
            conn = await upstream.wait_connection()
            if guarded:
                return await upstream.guard(call(conn))
            return await conn.request(what, lambda: call(conn))
        except McpRuntimeError as exc:
            raise _mcp_error(exc) from None

    def _filter(self) -> ToolFilter | None:
        upstream = self._resolve()
        return upstream.tools.tool_filter if upstream is not None else None

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        upstream = self._resolve()
        if upstream is None:
            return None
        return next((t.input_schema for t in upstream.tools.tools if t.name == name), None)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params else None
        page = await self._forward("tools/list", lambda c: c.client.list_tools(cursor=cursor))
        flt = self._filter()
        if flt is not None:
            page.tools = [
                t
                for t in page.tools
                if is_tool_allowed(t.name.strip(), include=flt.include, exclude=flt.exclude)
            ]
        return page

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        flt = self._filter()
        if flt is not None and not is_tool_allowed(
            params.name.strip(), include=flt.include, exclude=flt.exclude
        ):
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        arguments = dict(params.arguments) if params.arguments is not None else None
        return await self._forward("tools/call", lambda c: c.call_tool(params.name, arguments), guarded=True)

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params else None
        return await self._forward("resources/list", lambda c: c.client.list_resources(cursor=cursor))

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        cursor = params.cursor if params else None
        return await self._forward(
            "resources/templates/list", lambda c: c.client.list_resource_templates(cursor=cursor)
        )

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await self._forward("resources/read", lambda c: c.client.read_resource(str(params.uri)))

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        cursor = params.cursor if params else None
        return await self._forward("prompts/list", lambda c: c.client.list_prompts(cursor=cursor))

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return await self._forward(
            "prompts/get", lambda c: c.client.get_prompt(params.name, params.arguments)
        )

    async def _complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context else None
        return await self._forward(
            "completion/complete", lambda c: c.client.complete(params.ref, argument, context)
        )
