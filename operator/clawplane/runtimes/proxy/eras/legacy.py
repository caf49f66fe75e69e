"""One handshake-era client session over streamable HTTP: raw JSON-RPC between HTTP and a mux link.

The HTTP side follows the streamable-HTTP transport of 2025-03-26 … 2025-11-25:

- ``POST`` of a request: an SSE stream (as the MCP SDKs answer) that carries what the server
  sends for that request (progress, logging, sampling/elicitation/roots requests) and then the
  response, with keep-alive comments every ``SSE_DEFER_S`` while it waits. A stream of a
  2025-11-25 session starts with a priming event, and every event has an id, so a client that
  loses the stream resumes it with ``GET`` + ``Last-Event-ID``. A client disconnecting does not cancel
  its request (only ``notifications/cancelled`` does, which also ends the request's stream), except a
  call still held for an approval: it dies with its caller (``Link.withdraw``; the refusal is kept
  for a client that resumes).
- ``POST`` of notifications or responses: 202. A JSON array is a batch, accepted on sessions
  that negotiated 2025-03-26 (the only revision with batches) and answered with the array of
  responses; on later revisions it is invalid, as the specification says.
- ``GET``: the standalone stream for messages that belong to no request (one at a time: 409
  for a second); with ``Last-Event-ID``, the rest of that event's stream, then live.
- ``DELETE``: ends the session; later requests get 404.

Messages stay decoded JSON end to end: nothing is re-modelled, so ``_meta``, error ``data`` and
unknown fields pass unchanged. The session keeps its last ``MAX_EVENTS`` SSE events for
resumption. When the upstream goes away its pending requests have been answered with an error
and the session ends. A server that refuses the handshake (it speaks only 2026-07-28) is spoken
to in its revision for the client by ``eras.HandshakeView``. A message whose ``id`` is neither a
string nor an integer (an object, an array, a fraction, NaN, null) is refused with HTTP 400 and
``-32600``: its answer could never be routed back. Every HTTP request holds the session's
``Seat`` in use while it is served (its endpoint's ``ledger`` ends idle sessions); a ``ping`` is
not a use. An ``initialize`` that the
server leaves unanswered for ``connect_timeout`` seconds is answered with ``-32010`` and ends
the session, which frees its slot and its process.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.types import Receive, Scope, Send

from clawplane.runtimes.proxy.eras.bridging import HandshakeView
from clawplane.runtimes.proxy.eras.sse import (
    GET_STREAM,
    MAX_EVENTS,
    SSE_DEFER_S,
    SSE_HEADERS,
    WATCH_AFTER_S,
    Gone,
    Routed,
    Stream,
    StreamKey,
    StreamStore,
    accepts,
    disconnect_watch,
    error_body,
    header,
    invalid_id,
    is_message,
    is_ping,
    next_routed,
    no_use,
    read_body,
    sse_event,
    stream_key,
    trace_headers,
    write_chunk,
)
from clawplane.runtimes.proxy.gate import CallGate
from clawplane.runtimes.proxy.guard import Principal, reply
from clawplane.runtimes.proxy.hosting import SERVER_UNAVAILABLE
from clawplane.runtimes.proxy.ledger import Seat
from clawplane.runtimes.proxy.mux import Mux
from clawplane.runtimes.proxy.wire import Message, is_notification, is_request, is_response
from clawplane.telemetry import CallSite, CallTelemetry

__all__ = [
    "BATCH_REVISION",
    "MAX_EVENTS",
    "SSE_DEFER_S",
    "LegacySession",
]

logger = logging.getLogger(__name__)

BATCH_REVISION: Final = "2025-03-26"
PRIMING_REVISIONS: Final = frozenset({"2025-11-25"})
"""Revisions whose clients understand a priming event (an id with empty data) and resume."""
BATCH_TIMEOUT_S: Final = 300.0
_ACCEPT_BOTH: Final = "Not Acceptable: Client must accept both application/json and text/event-stream"


class LegacySession(StreamStore):
    """One client session of one hosted server (see the module docstring)."""

    def __init__(
        self,
        server: str,
        principal: Principal,
        upstream: AbstractAsyncContextManager[Mux],
        *,
        on_end: Callable[[LegacySession], None],
        seat: Seat | None = None,
        connect_timeout: float | None = None,
        tool_allowed: Callable[[str], bool] | None = None,
        gate: CallGate | None = None,
        site: CallSite | None = None,
        telemetry: CallTelemetry | None = None,
    ) -> None:
        self.id = uuid.uuid4().hex
        self._site = site
        if site is not None:
            site.session = self.id
        self._telemetry = telemetry
        self.server = server
        self.principal = principal
        self.protocol_version: str | None = None
        self._upstream = upstream
        self._on_end = on_end
        self._tool_allowed = tool_allowed
        self._gate = gate
        self.seat = seat
        """Its place in the endpoint's ledger (None: not accounted, as in unit tests)."""
        self._connect_timeout = connect_timeout
        self._link: HandshakeView | None = None
        self._streams: dict[StreamKey, Stream] = {}
        self._events: OrderedDict[int, tuple[StreamKey, Message]] = OrderedDict()
        self._event_ids = 0
        self.ended = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._sid = (b"mcp-session-id", self.id.encode())

    # -- lifetime ----------------------------------------------------------------------------
    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect upstream and route its messages until the session ends."""
        started = False
        try:
            async with self._upstream as mux:
                # A server that refuses the handshake is spoken to in 2026-07-28 for the client (eras).
                link = self._link = HandshakeView(
                    mux.open_link(
                        f"session {self.id[:8]}",
                        tool_allowed=self._tool_allowed,
                        gate=self._gate,
                        site=self._site,
                        telemetry=self._telemetry,
                    )
                )
                try:
                    with anyio.CancelScope() as self._scope:
                        task_status.started()
                        started = True
                        await self._route(link)
                finally:
                    await link.aclose()
                    if link.reason:
                        logger.info("%s: session %s ended: %s", self.server, self.id[:8], link.reason)
        except Exception:
            if not started:
                raise
            logger.exception("%s: session %s failed", self.server, self.id[:8])
        finally:
            self._finish()

    def _finish(self) -> None:
        self.ended.set()
        for stream in self._streams.values():
            stream.done = True
            if stream.send is not None:
                stream.send.close()
        self._on_end(self)

    def terminate(self, reason: str | None = None) -> None:
        """End the session (DELETE, eviction, idle, shutdown); its next request gets 404."""
        if reason is not None and not self.ended.is_set():
            logger.info("%s: session %s ended: %s", self.server, self.id[:8], reason)
        self.ended.set()
        if self._scope is not None:
            self._scope.cancel()

    def _busy(self) -> contextlib.AbstractContextManager[Callable[[], None]]:
        if self.seat is None:
            return contextlib.nullcontext(no_use)
        return self.seat.busy()

    # -- upstream → client -------------------------------------------------------------------
    async def _route(self, link: HandshakeView) -> None:
        async for delivery in link:
            msg = delivery.message
            if is_response(msg) and isinstance(msg.get("id"), int | str):
                self._note_version(msg)
                target = stream_key(msg["id"])
            elif delivery.related is not None:
                target = stream_key(delivery.related)
            else:
                target = GET_STREAM
            # Stored the moment it arrives, before any connection takes it: a client that hangs
            # up and resumes with Last-Event-ID gets every message after that id, including one
            # already handed to the connection it left (stored only once written, such a message
            # was lost to the resuming client).
            routed = Routed(self._store(target, msg), msg)
            stream = self._streams.get(target)
            if stream is not None and stream.send is not None and not stream.done:
                with contextlib.suppress(
                    anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError
                ):
                    stream.send.send_nowait(routed)
                    continue
            # Nobody reads that stream now (its client went away): the message waits, stored,
            # for a client resuming with Last-Event-ID.
            if target != GET_STREAM and is_response(msg):
                self._streams.pop(target, None)

    def _note_version(self, msg: Message) -> None:
        result = msg.get("result")
        if self.protocol_version is None and isinstance(result, dict):
            version = result.get("protocolVersion")
            if isinstance(version, str):
                self.protocol_version = version
                if self._site is not None:
                    self._site.revision = version

    # -- client → upstream -------------------------------------------------------------------
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request of this session."""
        if self.ended.is_set() or self._link is None:
            await reply(send, 404, error_body(-32600, "Not Found: Session has been terminated"))
            return
        method = scope.get("method")
        with self._busy() as use:
            if method == "POST":
                await self._post(scope, receive, send, use)
            elif method == "GET":
                use()
                await self._get(scope, receive, send)
            elif method == "DELETE":
                self.terminate()
                await reply(send, 200, {})
            else:
                await reply(
                    send,
                    405,
                    error_body(-32600, "Method Not Allowed"),
                    headers=[(b"allow", b"GET, POST, DELETE")],
                )

    async def _post(self, scope: Scope, receive: Receive, send: Send, use: Callable[[], None]) -> None:
        has_json, has_sse = accepts(scope)
        if not (has_json and has_sse):
            await reply(send, 406, error_body(-32600, _ACCEPT_BOTH))
            return
        if header(scope, b"content-type").split(";")[0].strip().lower() != "application/json":
            await reply(
                send, 415, error_body(-32600, "Unsupported Media Type: Content-Type must be application/json")
            )
            return
        body = await read_body(receive)
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError) as exc:
            await reply(send, 400, error_body(-32700, f"Parse error: {exc}"))
            return
        if not is_ping(decoded):
            use()
        if isinstance(decoded, list):
            await self._batch(decoded, send)
            return
        problem = invalid_id(decoded)
        if problem is not None:
            await reply(send, 400, error_body(-32600, problem))
            return
        if not is_message(decoded):
            await reply(send, 400, error_body(-32600, "Invalid Request: not a JSON-RPC message"))
            return
        link = self._link
        assert link is not None
        if not is_request(decoded):
            await link.send(decoded)
            await self._after_notification(decoded)
            await send({"type": "http.response.start", "status": 202, "headers": [self._sid]})
            await send({"type": "http.response.body", "body": b""})
            return
        await self._request(decoded, link, receive, send, len(body), scope)

    async def _after_notification(self, msg: Message) -> None:
        if is_notification(msg) and msg.get("method") == "notifications/cancelled":
            request_id = (msg.get("params") or {}).get("requestId")
            stream = self._streams.get(stream_key(request_id)) if isinstance(request_id, int | str) else None
            if stream is not None:
                # The server will not answer a cancelled request: end its stream now.
                stream.done = True
                if stream.send is not None:
                    stream.send.close()

    async def _request(
        self,
        msg: Message,
        link: HandshakeView,
        receive: Receive,
        send: Send,
        size: int = 0,
        scope: Scope | None = None,
    ) -> None:
        key = stream_key(msg["id"])
        stream = self._streams[key] = Stream()
        # Not subscripted: a subscripted generic costs a typing call on every request.
        sender: MemoryObjectSendStream[Routed]
        receiver: MemoryObjectReceiveStream[Routed]
        sender, receiver = anyio.create_memory_object_stream(MAX_EVENTS)
        stream.send = sender
        # The priming event's id must precede every message the server sends for this request
        # (they are stored as they arrive), or a resume from it would skip the first of them.
        priming = self._store(key, {}) if self.protocol_version in PRIMING_REVISIONS else None
        # The handshake is bounded: a server that never answers it must not hold a slot and a process.
        opening = msg.get("method") == "initialize" and self.protocol_version is None
        deadline = anyio.current_time() + self._connect_timeout if opening and self._connect_timeout else None
        try:
            if self._telemetry is not None and scope is not None:
                await link.send(msg, size=size, headers=trace_headers(scope))
            else:
                await link.send(msg)
            answered = await self._answer(key, stream, receiver, receive, send, priming, deadline)
            if not answered:
                self.terminate(f"the server did not answer initialize within {self._connect_timeout:g} s")
            elif opening and not stream.done:
                self.terminate("its client left before initialize was answered")
        finally:
            if stream.send is sender:
                stream.send = None
            sender.close()
            receiver.close()
            if stream.done:
                self._streams.pop(key, None)

    async def _answer(
        self,
        key: StreamKey,
        stream: Stream,
        receiver: MemoryObjectReceiveStream[Routed],
        receive: Receive,
        send: Send,
        priming: int | None,
        deadline: float | None = None,
    ) -> bool:
        """Stream one request's messages and its answer; False when ``deadline`` passed unanswered."""
        # Always an SSE stream, as the MCP SDKs answer: the request's notifications and server
        # requests can share it, and a 2025-11-25 client can resume it. Most answers come at once:
        # the head, the priming event and the answer then go out together, a write and a wake-up
        # of the client fewer each; a later answer gets them after a moment, and only a stream
        # still open then gets a task that notices its client hanging up (a task per call is a
        # fair share of the proxy's cost).
        item = await next_routed(receiver, WATCH_AFTER_S)
        await send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, self._sid]})
        gone = Gone(self._leaving(key, stream))
        head = f"id: {priming}\r\ndata: \r\n\r\n".encode() if priming is not None else b""
        if item is not None:
            if await self._emit(key, stream, item, send, gone, head=head):
                return True
        elif head:
            await write_chunk(send, head, gone)
        async with disconnect_watch(receive, gone):
            while True:
                wait = SSE_DEFER_S
                if deadline is not None:
                    wait = min(wait, deadline - anyio.current_time())
                    if wait <= 0:
                        await self._unanswered(key, stream, send, gone)
                        return False
                item = await next_routed(receiver, wait)
                if item is None:
                    if wait < SSE_DEFER_S:
                        continue  # the deadline came first: answered at the top
                    if not await write_chunk(send, b": ping\r\n\r\n", gone):
                        return True
                    continue
                if await self._emit(key, stream, item, send, gone):
                    return True

    async def _unanswered(self, key: StreamKey, stream: Stream, send: Send, gone: Gone) -> None:
        """Answer an ``initialize`` the server let pass its deadline, and end its stream."""
        stream.done = True
        message = (
            f'MCP server "{self.server}" did not answer initialize within {self._connect_timeout:g} s '
            "(its connectionTimeoutMs); the session is closed. Try again, or see "
            f"`clawplane status {self.server}` for its stderr"
        )
        error = error_body(SERVER_UNAVAILABLE, message, key[1])
        await write_chunk(send, sse_event(self._store(key, error), error), gone, more=False)

    async def _batch(self, batch: list[Any], send: Send) -> None:
        """A 2025-03-26 batch: forward every member, answer with the array of responses."""
        if self.protocol_version != BATCH_REVISION:
            message = f"Invalid Request: batches exist only in {BATCH_REVISION}"
            await reply(send, 400, error_body(-32600, message))
            return
        if not batch or not all(is_message(m) for m in batch):
            await reply(send, 400, error_body(-32600, "Invalid Request: not a batch of JSON-RPC messages"))
            return
        if any(m.get("method") == "initialize" for m in batch):
            message = "Invalid Request: initialize must not be part of a batch"
            await reply(send, 400, error_body(-32600, message))
            return
        link = self._link
        assert link is not None
        waits: list[tuple[StreamKey, MemoryObjectReceiveStream[Routed], Stream]] = []
        for msg in batch:
            if is_request(msg):
                key = stream_key(msg["id"])
                stream = self._streams[key] = Stream()
                sender, receiver = anyio.create_memory_object_stream[Routed](MAX_EVENTS)
                stream.send = sender
                waits.append((key, receiver, stream))
        for msg in batch:
            await link.send(msg)
            await self._after_notification(msg)
        if not waits:
            await send({"type": "http.response.start", "status": 202, "headers": [self._sid]})
            await send({"type": "http.response.body", "body": b""})
            return
        responses: list[Message] = []
        with anyio.move_on_after(BATCH_TIMEOUT_S):
            for key, receiver, stream in waits:
                async for routed in receiver:
                    if is_response(routed.message):
                        responses.append(routed.message)
                        break
                stream.done = True
                self._streams.pop(key, None)
                receiver.close()
        await reply(send, 200, responses, headers=[self._sid])
