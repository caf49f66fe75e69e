"""A client session to one server, as the supervisor and the bridge use it.

``open_connection`` wraps the SDK's ``Client`` in ``auto`` mode (``server/discover`` first,
``initialize`` for handshake-era servers) over any transport and bounds the handshake by
``connectionTimeoutMs``. Every request is bounded by ``requestTimeoutMs``, and whatever
goes wrong in the SDK or the transport comes out as ``RequestFailedError`` (or
``RequestTimeoutError``) with secrets redacted. ``closed`` is set when the server side of
the transport ends (process exit, dropped SSE stream).

A server may ask for input while serving a request (``elicitation/create``, in the handshake
era as a request, in 2026-07-28 as an ``InputRequiredResult`` the SDK answers and retries):
``elicitation`` answers it (``runtimes.elicitation.accept_defaults`` fills in the schema's
defaults); without one the client declares no elicitation support.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, TypeVar

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.client.session import ElicitationFnT
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from clawplane import __version__
from clawplane.runtimes.client.changes import Change, ChangeFanout
from clawplane.runtimes.client.listing import ListLimits, Page, collect_pages
from clawplane.runtimes.errors import (
    ConnectTimeoutError,
    RequestFailedError,
    RequestTimeoutError,
    StartError,
)

__all__ = ["CLIENT_INFO", "Connection", "describe_error", "open_connection"]

logger = logging.getLogger(__name__)

CLIENT_INFO = types.Implementation(name="clawplane", version=__version__)
"""How clawplane introduces itself to the servers it connects to."""

# Failures a request can end in: protocol errors, malformed results, transport trouble.
REQUEST_ERRORS = (
    MCPError,
    ValidationError,
    httpx2.HTTPError,
    OSError,
    TimeoutError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)
_RELISTEN_SECONDS = 1.0
_LISTEN_SETTLE_SECONDS = 2.0
"""How long a handshake-era connect waits for the server to answer its standalone GET stream."""
T = TypeVar("T")


def describe_error(exc: BaseException) -> str:
    """A one-line description of an error, digging the first cause out of exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return f"{exc.error.message} (code {exc.code})"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class _WatchedReadStream:
    """A transport's read stream that sets ``closed`` when the server side ends."""

    def __init__(self, inner: Any, closed: anyio.Event) -> None:
        self._inner = inner
        self._closed = closed

    @property
    def last_context(self) -> Any:
        """The sender's context snapshot, for transports that carry one (streamable HTTP)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        """The next message from the server."""
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._closed.set()
            raise
        if isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCResponse):
            result = item.message.result
            # SEP-2322: a result without ``resultType`` is complete; the SDK's 2026-07-28
            # validation wants it spelt out. Revisions before it ignore the key. A copy: the
            # message may be shared (a mux link hands out what the process wrote).
            if isinstance(result, dict) and "resultType" not in result:
                response = item.message.model_copy(update={"result": {**result, "resultType": "complete"}})
                return SessionMessage(message=response, metadata=item.metadata)
        return item

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


@contextlib.asynccontextmanager
async def _watched(
    transport: AbstractAsyncContextManager[TransportStreams], closed: anyio.Event
) -> AsyncIterator[TransportStreams]:
    async with transport as (read_stream, write_stream):
        yield _WatchedReadStream(read_stream, closed), write_stream


class Connection:
    """A connected client session to one server."""

    def __init__(
        self,
        client: Client,
        *,
        server: str,
        request_timeout: float,
        closed: anyio.Event,
        fanout: ChangeFanout,
        redact: Callable[[str], str],
    ) -> None:
        self.client = client
        self.server = server
        self.request_timeout = request_timeout
        self.closed = closed
        self.fanout = fanout
        self._redact = redact

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol version (``2026-07-28`` or a handshake-era date)."""
        return self.client.protocol_version

    @property
    def server_info(self) -> types.Implementation | None:
        """The server's name and version, when it gave them."""
        return self.client.server_info

    @property
    def capabilities(self) -> types.ServerCapabilities:
        """What the server said it supports."""
        return self.client.server_capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for models, if any."""
        return self.client.instructions

    async def request(self, what: str, call: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Run one request within the request timeout, mapping every failure to ours.

        Raises:
            RequestTimeoutError: No answer within the timeout.
            RequestFailedError: The server answered with an error, or the transport failed.
        """
        seconds = self.request_timeout if timeout is None else timeout
        try:
            # The session's own timeout starts after the write; this one also covers a stuck write.
            with anyio.fail_after(seconds):
                return await call()
        except REQUEST_ERRORS as exc:
            if isinstance(exc, TimeoutError) or (
                isinstance(exc, MCPError) and exc.code == types.REQUEST_TIMEOUT
            ):
                raise RequestTimeoutError(f"{what} timed out after {seconds:g}s") from None
            code = exc.code if isinstance(exc, MCPError) else None
            raise RequestFailedError(
                self._redact(f"{what} failed: {describe_error(exc)}"), code=code
            ) from None

    async def check_alive(self, timeout: float | None = None) -> None:
        """Ask the server for a cheap answer, the way its protocol revision has it.

        Handshake-era revisions have ``ping``; 2026-07-28 removed it (the SDK warns on every
        call), and a stateless ``server/discover`` at the negotiated version is its cheap request.

        Raises:
            RequestTimeoutError: No answer within the timeout.
            RequestFailedError: The server answered with an error, or the transport failed.
        """
        version = self.protocol_version
        session = self.client.session
        if version in MODERN_PROTOCOL_VERSIONS:
            await self.request("server/discover", lambda: session.send_discover(version), timeout)
        else:
            await self.request("ping", session.send_ping, timeout)

    async def list_tools(self, limits: ListLimits) -> list[types.Tool]:
        """Every tool, within OpenClaw's listing bounds."""

        async def page(cursor: str | None) -> Page[types.Tool]:
            result = await self.request(
                "tools/list", lambda: self.client.list_tools(cursor=cursor), limits.timeout
            )
            return Page(result.tools, result.next_cursor, _json_size(result))

        return await collect_pages(page, limits, label="MCP tool listing", item_label="tools")

    async def list_resources(self, limits: ListLimits) -> list[types.Resource]:
        """Every resource, within OpenClaw's listing bounds."""

        async def page(cursor: str | None) -> Page[types.Resource]:
            result = await self.request("resources/list", lambda: self.client.list_resources(cursor=cursor))
            return Page(result.resources, result.next_cursor, _json_size(result))

        return await collect_pages(page, limits, label="MCP resource listing", item_label="resources")

    async def list_prompts(self, limits: ListLimits) -> list[types.Prompt]:
        """Every prompt, within OpenClaw's listing bounds."""

        async def page(cursor: str | None) -> Page[types.Prompt]:
            result = await self.request("prompts/list", lambda: self.client.list_prompts(cursor=cursor))
            return Page(result.prompts, result.next_cursor, _json_size(result))

        return await collect_pages(page, limits, label="MCP prompt listing", item_label="prompts")

    async def call_tool(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """Call one tool; an ``isError`` result is a result, not a failure."""
        return await self.request(
            f"tools/call {name!r}",
            lambda: self.client.call_tool(name, arguments, read_timeout_seconds=self.request_timeout),
        )

    async def follow_changes(self, subscribed: anyio.Event) -> None:
        """Keep a 2026-07-28 ``subscriptions/listen`` stream open, publishing its events.

        Sets ``subscribed`` once the first stream is acknowledged (no change after that is
        missed), or at once when there is nothing to follow: handshake-era sessions (their
        notifications reach the fanout through the message handler), servers that announce
        no list changes, and servers whose listen fails.
        """
        caps = self.capabilities
        wanted = [bool(c and c.list_changed) for c in (caps.tools, caps.prompts, caps.resources)]
        try:
            if self.protocol_version not in MODERN_PROTOCOL_VERSIONS or not any(wanted):
                return
            while not self.closed.is_set():
                try:
                    async with self.client.listen(
                        tools_list_changed=wanted[0],
                        prompts_list_changed=wanted[1],
                        resources_list_changed=wanted[2],
                    ) as subscription:
                        if subscribed.is_set():  # events may have passed while the stream was down
                            for change in Change:
                                self.fanout.publish(change)
                        subscribed.set()
                        async for event in subscription:
                            self.fanout.publish_event(event)
                    return
                except SubscriptionLost:
                    await anyio.sleep(_RELISTEN_SECONDS)
                except (ListenNotSupportedError, *REQUEST_ERRORS) as exc:
                    logger.debug("%s: not following changes: %s", self.server, describe_error(exc))
                    return
        finally:
            subscribed.set()


def _json_size(result: Any) -> int:
    """UTF-8 bytes of a result's JSON, as OpenClaw measures listing pages."""
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8"))


async def _settle(transport: object, version: str, connect_timeout: float) -> None:
    """Let a handshake-era HTTP session's standalone GET stream open before the first request.

    Otherwise a server that answers a request on whichever stream is open (resumption after
    a dropped response stream, notifications) may find none, or a different one than it
    would a moment later.
    """
    settle = getattr(transport, "settle", None)
    if settle is not None and version not in MODERN_PROTOCOL_VERSIONS:
        await settle(min(_LISTEN_SETTLE_SECONDS, connect_timeout))


@contextlib.asynccontextmanager
async def open_connection(
    transport: AbstractAsyncContextManager[TransportStreams],
    *,
    server: str,
    connect_timeout: float,
    request_timeout: float,
    fanout: ChangeFanout | None = None,
    redact: Callable[[str], str] = str,
    closed: anyio.Event | None = None,
    elicitation: ElicitationFnT | None = None,
) -> AsyncIterator[Connection]:
    """Connect over ``transport`` and hand out the session until the context exits.

    ``closed`` (made here when not given) is set when the server side of the transport ends;
    ``elicitation`` answers the server's requests for input (none: not supported).

    Raises:
        ConnectTimeoutError: The handshake did not finish within ``connect_timeout``.
        StartError: The handshake failed.
    """
    closed = closed or anyio.Event()
    fanout = fanout or ChangeFanout()
    client = Client(
        _watched(transport, closed),
        mode="auto",
        read_timeout_seconds=request_timeout,
        message_handler=fanout.message_handler,
        client_info=CLIENT_INFO,
        cache=None,
        elicitation_callback=elicitation,
    )
    connected = False
    # Entered before the client so the client's task groups nest inside it; once connected
    # the deadline is lifted instead of leaving the scope early.
    with anyio.CancelScope(deadline=anyio.current_time() + connect_timeout) as scope:
        try:
            async with client:
                await _settle(transport, client.protocol_version, connect_timeout)
                connected = True
                scope.deadline = math.inf
                yield Connection(
                    client,
                    server=server,
                    request_timeout=request_timeout,
                    closed=closed,
                    fanout=fanout,
                    redact=redact,
                )
        except Exception as exc:  # start boundary: any failure to connect means "did not start"
            if connected:
                raise
            raise StartError(
                redact(f'MCP server "{server}" failed to start: {describe_error(exc)}')
            ) from None
    if not connected:
        raise ConnectTimeoutError(server, connect_timeout)
