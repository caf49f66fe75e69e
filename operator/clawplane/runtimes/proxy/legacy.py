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
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Final

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.types import Message as AsgiMessage
from starlette.types import Receive, Scope, Send

from clawplane._utils.compactjson import compact
from clawplane.runtimes.proxy.eras import HandshakeView
from clawplane.runtimes.proxy.gate import CallGate
from clawplane.runtimes.proxy.guard import Principal, reply
from clawplane.runtimes.proxy.hosting import SERVER_UNAVAILABLE
from clawplane.runtimes.proxy.ledger import Seat
from clawplane.runtimes.proxy.mux import Mux
from clawplane.runtimes.proxy.wire import Message, RequestId, is_notification, is_request, is_response

__all__ = [
    "BATCH_REVISION",
    "MAX_EVENTS",
    "SSE_DEFER_S",
    "LegacySession",
    "invalid_id",
    "is_ping",
    "read_body",
    "replay_body",
]

logger = logging.getLogger(__name__)

BATCH_REVISION: Final = "2025-03-26"
PRIMING_REVISIONS: Final = frozenset({"2025-11-25"})
"""Revisions whose clients understand a priming event (an id with empty data) and resume."""
SSE_DEFER_S: Final = 15.0
"""Seconds between keep-alive comments on an SSE stream that has nothing to send."""
MAX_EVENTS: Final = 1024
BATCH_TIMEOUT_S: Final = 300.0
GET_STREAM: Final = ("get", "")
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
_ACCEPT_BOTH: Final = "Not Acceptable: Client must accept both application/json and text/event-stream"

StreamKey = tuple[Any, RequestId]


def _key(value: RequestId) -> StreamKey:
    return (type(value), value)


def replay_body(body: bytes, then: Receive | None = None) -> Receive:
    """A ``receive`` that hands out ``body`` once (it has already been read), then waits on ``then``
    (the request's own ``receive``, which tells of the client hanging up) or forever."""
    sent = False

    async def receive() -> AsgiMessage:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        if then is not None:
            return await then()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    return receive


async def read_body(receive: Receive) -> bytes:
    """The whole request body (the listener bounds its size)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return ""


def _accepts(scope: Scope) -> tuple[bool, bool]:
    accept = _header(scope, b"accept").lower()
    anything = "*/*" in accept
    return (
        anything or "application/json" in accept or "application/*" in accept,
        anything or "text/event-stream" in accept or "text/*" in accept,
    )


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _encode(msg: Message) -> bytes:
    return compact(msg).encode("utf-8")


def _event(event_id: int | None, msg: Message | None) -> bytes:
    data = _encode(msg).decode("utf-8") if msg is not None else ""
    head = f"id: {event_id}\r\n" if event_id is not None else ""
    return f"{head}event: message\r\ndata: {data}\r\n\r\n".encode()


@dataclass(frozen=True, slots=True)
class _Routed:
    """A message on its way to a client, with the event id it was stored under when it arrived."""

    event_id: int
    message: Message


class _Stream:
    """Where the messages of one request (or of the standalone stream) go right now."""

    def __init__(self) -> None:
        self.send: MemoryObjectSendStream[_Routed] | None = None
        self.done = False


class LegacySession:
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
    ) -> None:
        self.id = uuid.uuid4().hex
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
        self._streams: dict[StreamKey, _Stream] = {}
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
                    mux.open_link(f"session {self.id[:8]}", tool_allowed=self._tool_allowed, gate=self._gate)
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
            return contextlib.nullcontext(_no_use)
        return self.seat.busy()

    # -- upstream → client -------------------------------------------------------------------
    async def _route(self, link: HandshakeView) -> None:
        async for delivery in link:
            msg = delivery.message
            if is_response(msg) and isinstance(msg.get("id"), int | str):
                self._note_version(msg)
                target = _key(msg["id"])
            elif delivery.related is not None:
                target = _key(delivery.related)
            else:
                target = GET_STREAM
            # Stored the moment it arrives, before any connection takes it: a client that hangs
            # up and resumes with Last-Event-ID gets every message after that id, including one
            # already handed to the connection it left (stored only once written, such a message
            # was lost to the resuming client).
            routed = _Routed(self._store(target, msg), msg)
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

    def _store(self, target: StreamKey, msg: Message) -> int:
        self._event_ids += 1
        self._events[self._event_ids] = (target, msg)
        while len(self._events) > MAX_EVENTS:
            self._events.popitem(last=False)
        return self._event_ids

    def _note_version(self, msg: Message) -> None:
        result = msg.get("result")
        if self.protocol_version is None and isinstance(result, dict):
            version = result.get("protocolVersion")
            if isinstance(version, str):
                self.protocol_version = version

    # -- client → upstream -------------------------------------------------------------------
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request of this session."""
        if self.ended.is_set() or self._link is None:
            await reply(send, 404, _error(-32600, "Not Found: Session has been terminated"))
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
                    _error(-32600, "Method Not Allowed"),
                    headers=[(b"allow", b"GET, POST, DELETE")],
                )

    async def _post(self, scope: Scope, receive: Receive, send: Send, use: Callable[[], None]) -> None:
        has_json, has_sse = _accepts(scope)
        if not (has_json and has_sse):
            await reply(send, 406, _error(-32600, _ACCEPT_BOTH))
            return
        if _header(scope, b"content-type").split(";")[0].strip().lower() != "application/json":
            await reply(
                send, 415, _error(-32600, "Unsupported Media Type: Content-Type must be application/json")
            )
            return
        body = await read_body(receive)
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError) as exc:
            await reply(send, 400, _error(-32700, f"Parse error: {exc}"))
            return
        if not is_ping(decoded):
            use()
        if isinstance(decoded, list):
            await self._batch(decoded, send)
            return
        problem = invalid_id(decoded)
        if problem is not None:
            await reply(send, 400, _error(-32600, problem))
            return
        if not _is_message(decoded):
            await reply(send, 400, _error(-32600, "Invalid Request: not a JSON-RPC message"))
            return
        link = self._link
        assert link is not None
        if not is_request(decoded):
            await link.send(decoded)
            await self._after_notification(decoded)
            await send({"type": "http.response.start", "status": 202, "headers": [self._sid]})
            await send({"type": "http.response.body", "body": b""})
            return
        await self._request(decoded, link, receive, send)

    async def _after_notification(self, msg: Message) -> None:
        if is_notification(msg) and msg.get("method") == "notifications/cancelled":
            request_id = (msg.get("params") or {}).get("requestId")
            stream = self._streams.get(_key(request_id)) if isinstance(request_id, int | str) else None
            if stream is not None:
                # The server will not answer a cancelled request: end its stream now.
                stream.done = True
                if stream.send is not None:
                    stream.send.close()

    async def _request(self, msg: Message, link: HandshakeView, receive: Receive, send: Send) -> None:
        key = _key(msg["id"])
        stream = self._streams[key] = _Stream()
        # Not subscripted: a subscripted generic costs a typing call on every request.
        sender: MemoryObjectSendStream[_Routed]
        receiver: MemoryObjectReceiveStream[_Routed]
        sender, receiver = anyio.create_memory_object_stream(MAX_EVENTS)
        stream.send = sender
        # The priming event's id must precede every message the server sends for this request
        # (they are stored as they arrive), or a resume from it would skip the first of them.
        priming = self._store(key, {}) if self.protocol_version in PRIMING_REVISIONS else None
        # The handshake is bounded: a server that never answers it must not hold a slot and a process.
        opening = msg.get("method") == "initialize" and self.protocol_version is None
        deadline = anyio.current_time() + self._connect_timeout if opening and self._connect_timeout else None
        try:
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
        stream: _Stream,
        receiver: MemoryObjectReceiveStream[_Routed],
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
        item = await _next(receiver, _WATCH_AFTER_S)
        await send({"type": "http.response.start", "status": 200, "headers": [*_SSE_HEADERS, self._sid]})
        gone = _Gone(self._leaving(key, stream))
        head = f"id: {priming}\r\ndata: \r\n\r\n".encode() if priming is not None else b""
        if item is not None:
            if await self._emit(key, stream, item, send, gone, head=head):
                return True
        elif head:
            await _write(send, head, gone)
        async with _disconnect_watch(receive, gone):
            while True:
                wait = SSE_DEFER_S
                if deadline is not None:
                    wait = min(wait, deadline - anyio.current_time())
                    if wait <= 0:
                        await self._unanswered(key, stream, send, gone)
                        return False
                item = await _next(receiver, wait)
                if item is None:
                    if wait < SSE_DEFER_S:
                        continue  # the deadline came first: answered at the top
                    if not await _write(send, b": ping\r\n\r\n", gone):
                        return True
                    continue
                if await self._emit(key, stream, item, send, gone):
                    return True

    async def _unanswered(self, key: StreamKey, stream: _Stream, send: Send, gone: _Gone) -> None:
        """Answer an ``initialize`` the server let pass its deadline, and end its stream."""
        stream.done = True
        message = (
            f'MCP server "{self.server}" did not answer initialize within {self._connect_timeout:g} s '
            "(its connectionTimeoutMs); the session is closed. Try again, or see "
            f"`clawplane status {self.server}` for its stderr"
        )
        error = _error(SERVER_UNAVAILABLE, message, key[1])
        await _write(send, _event(self._store(key, error), error), gone, more=False)

    def _leaving(self, key: StreamKey, stream: _Stream) -> Callable[[], None]:
        """What the client reading ``key``'s stream leaving means: a call still held for an approval
        dies with it, unless its answer came or a resuming client has taken the stream over."""
        reader = stream.send

        def left() -> None:
            if self._link is not None and not stream.done and stream.send is reader:
                self._link.withdraw(key[1], "the caller's HTTP request disconnected before an answer")

        return left

    async def _emit(
        self, key: StreamKey, stream: _Stream, item: _Routed, send: Send, gone: _Gone, *, head: bytes = b""
    ) -> bool:
        """Write one message of a stream (a request's, or the resumed standalone one), after ``head``
        (its priming event, when not yet written); True at its end."""
        if item is _CLOSED:
            # Taken over by a resuming client, or the session ended (which marks it done).
            await _write(send, head, gone, more=False)
            return True
        final = is_response(item.message) and key != GET_STREAM
        if final:
            stream.done = True
        data = head + _event(item.event_id, item.message)
        return not await _write(send, data, gone, more=not final) or final

    async def _get(self, scope: Scope, receive: Receive, send: Send) -> None:
        _, has_sse = _accepts(scope)
        if not has_sse:
            await reply(send, 406, _error(-32600, "Not Acceptable: Client must accept text/event-stream"))
            return
        last = _header(scope, b"last-event-id")
        if last:
            await self._resume(last, receive, send)
            return
        current = self._streams.get(GET_STREAM)
        if current is not None and current.send is not None:
            await reply(send, 409, _error(-32600, "Conflict: Only one SSE stream is allowed per session"))
            return
        await self._live(GET_STREAM, after=None, receive=receive, send=send)

    async def _resume(self, last: str, receive: Receive, send: Send) -> None:
        try:
            after = int(last)
        except ValueError:
            after = -1
        entry = self._events.get(after)
        if entry is None:
            # Unknown or evicted: nothing to replay; the standalone stream continues from now.
            await self._live(GET_STREAM, after=None, receive=receive, send=send)
            return
        await self._live(entry[0], after=after, receive=receive, send=send)

    async def _live(self, key: StreamKey, *, after: int | None, receive: Receive, send: Send) -> None:
        """Replay ``key``'s events after ``after``, then stream it live while it is open."""
        stream = self._streams.get(key)
        if stream is None:
            stream = _Stream()
            if key == GET_STREAM:
                self._streams[key] = stream
        sender, receiver = anyio.create_memory_object_stream[_Routed](MAX_EVENTS)
        replay = [(n, m) for n, (k, m) in self._events.items() if k == key and (after is None or n > after)]
        live = not stream.done
        if live:
            # A resuming client takes the stream over from a connection that may not know yet
            # that its client has gone.
            if stream.send is not None and key != GET_STREAM:
                stream.send.close()
            stream.send = sender
        await send({"type": "http.response.start", "status": 200, "headers": [*_SSE_HEADERS, self._sid]})
        try:
            leaving = self._leaving(key, stream) if live and key != GET_STREAM else None
            async with _disconnect_watch(receive, _Gone(leaving)) as gone:
                for number, msg in replay if after is not None else []:
                    if not msg:
                        continue  # a priming event
                    if not await _write(send, _event(number, msg), gone):
                        return
                    if is_response(msg) and key != GET_STREAM:
                        await _write(send, b"", gone, more=False)
                        return
                if not live:
                    await _write(send, b"", gone, more=False)
                    return
                while True:
                    item = await _next(receiver, SSE_DEFER_S)
                    if item is None:
                        if not await _write(send, b": ping\r\n\r\n", gone):
                            return
                        continue
                    if await self._emit(key, stream, item, send, gone):
                        return
        finally:
            if stream.send is sender:
                stream.send = None
            sender.close()
            receiver.close()

    async def _batch(self, batch: list[Any], send: Send) -> None:
        """A 2025-03-26 batch: forward every member, answer with the array of responses."""
        if self.protocol_version != BATCH_REVISION:
            await reply(send, 400, _error(-32600, f"Invalid Request: batches exist only in {BATCH_REVISION}"))
            return
        if not batch or not all(_is_message(m) for m in batch):
            await reply(send, 400, _error(-32600, "Invalid Request: not a batch of JSON-RPC messages"))
            return
        if any(m.get("method") == "initialize" for m in batch):
            await reply(send, 400, _error(-32600, "Invalid Request: initialize must not be part of a batch"))
            return
        link = self._link
        assert link is not None
        waits: list[tuple[StreamKey, MemoryObjectReceiveStream[_Routed], _Stream]] = []
        for msg in batch:
            if is_request(msg):
                key = _key(msg["id"])
                stream = self._streams[key] = _Stream()
                sender, receiver = anyio.create_memory_object_stream[_Routed](MAX_EVENTS)
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


def _is_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("jsonrpc") == "2.0"
        and ("method" in value or "result" in value or "error" in value)
        and invalid_id(value) is None
    )


def invalid_id(msg: Any) -> str | None:
    """Why a JSON-RPC message's ``id`` or ``params`` cannot be served (None: they can).

    An id must be a string or an integer: the answer is routed back by it, and an object,
    array, fraction, NaN or null would never find its way (or not hash at all).
    """
    if not isinstance(msg, dict) or "id" not in msg:
        return None
    request_id = msg["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return "Invalid Request: the id must be a string or an integer"
    if "method" in msg and "params" in msg and not isinstance(msg["params"], dict | list):
        return "Invalid Request: params must be an object or an array"
    return None


def is_ping(decoded: Any) -> bool:
    """Whether a POSTed body is only ``ping`` requests (which do not count as using a session)."""
    if isinstance(decoded, list):
        return bool(decoded) and all(is_ping(member) for member in decoded)
    return isinstance(decoded, dict) and decoded.get("method") == "ping"


def _no_use() -> None:
    return None


_CLOSED: Final = _Routed(-1, {})


async def _next(receiver: MemoryObjectReceiveStream[_Routed], timeout: float) -> _Routed | None:
    """The next message, ``_CLOSED`` when the stream ended, None after ``timeout`` (a ping is due)."""
    with anyio.move_on_after(timeout):
        try:
            return await receiver.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return _CLOSED
    return None


async def _write(send: Send, data: bytes, gone: _Gone, *, more: bool = True) -> bool:
    """Write a chunk of an SSE response; False once the client has gone."""
    if gone.is_set():
        return False
    try:
        await send({"type": "http.response.body", "body": data, "more_body": more})
    except OSError:
        return False
    return True


_WATCH_AFTER_S: Final = 0.25
"""Seconds a request's stream stays open before a task starts watching for its client leaving."""


class _Gone:
    """Set once the client of a streamed response has disconnected (``is_set`` like an Event)."""

    def __init__(self, on_set: Callable[[], None] | None = None) -> None:
        self.event = anyio.Event()
        self._on_set = on_set

    def is_set(self) -> bool:
        return self.event.is_set()

    def set(self) -> None:
        if not self.event.is_set():
            self.event.set()
            if self._on_set is not None:
                self._on_set()


@contextlib.asynccontextmanager
async def _disconnect_watch(receive: Receive, gone: _Gone | None = None) -> AsyncIterator[_Gone]:
    gone = gone or _Gone()

    async def watch() -> None:
        while (await receive()).get("type") != "http.disconnect":
            pass
        gone.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        try:
            yield gone
        finally:
            tg.cancel_scope.cancel()
