"""The HTTP and SSE plumbing of a handshake-era session (``legacy``): bodies, events, streams.

Reading and replaying a request body, the ``Accept`` check, SSE event framing, the per-request
stream a routed message waits on, writing a chunk until the client has gone and watching for
it leaving, the JSON-RPC checks a POSTed body passes before it is routed, and ``StreamStore``:
every event kept for ``Last-Event-ID``, a stream replayed and then followed live.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Final

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.types import Message as AsgiMessage
from starlette.types import Receive, Scope, Send

from clawplane._utils.compactjson import compact
from clawplane.runtimes.proxy.eras.bridging import HandshakeView
from clawplane.runtimes.proxy.guard import reply
from clawplane.runtimes.proxy.wire import Message, RequestId, is_response

__all__ = [
    "CLOSED",
    "GET_STREAM",
    "MAX_EVENTS",
    "SSE_DEFER_S",
    "SSE_HEADERS",
    "WATCH_AFTER_S",
    "Gone",
    "Routed",
    "Stream",
    "StreamKey",
    "StreamStore",
    "accepts",
    "disconnect_watch",
    "encode",
    "error_body",
    "header",
    "invalid_id",
    "is_message",
    "is_ping",
    "next_routed",
    "no_use",
    "read_body",
    "replay_body",
    "sse_event",
    "stream_key",
    "write_chunk",
]

SSE_DEFER_S: Final = 15.0
"""Seconds between keep-alive comments on an SSE stream that has nothing to send."""
MAX_EVENTS: Final = 1024
GET_STREAM: Final = ("get", "")
SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]

StreamKey = tuple[Any, RequestId]


def stream_key(value: RequestId) -> StreamKey:
    """Where the messages of request ``value`` go (an id's type is part of it: 1 is not "1")."""
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


def header(scope: Scope, name: bytes) -> str:
    """The request's header ``name`` (empty when absent)."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return ""


_TRACE_HEADERS = (b"traceparent", b"tracestate")


def trace_headers(scope: Scope) -> dict[str, str]:
    """The request's W3C trace context headers (``traceparent``, ``tracestate``), for telemetry."""
    return {
        key.decode(): value.decode("latin-1")
        for key, value in scope.get("headers", ())
        if key in _TRACE_HEADERS
    }


def accepts(scope: Scope) -> tuple[bool, bool]:
    """Whether the client accepts JSON, and whether it accepts SSE."""
    accept = header(scope, b"accept").lower()
    anything = "*/*" in accept
    return (
        anything or "application/json" in accept or "application/*" in accept,
        anything or "text/event-stream" in accept or "text/*" in accept,
    )


def error_body(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def encode(msg: Message) -> bytes:
    """A JSON-RPC message as compact UTF-8 JSON."""
    return compact(msg).encode("utf-8")


def sse_event(event_id: int | None, msg: Message | None) -> bytes:
    """One SSE ``message`` event (a priming event when ``msg`` is None)."""
    data = encode(msg).decode("utf-8") if msg is not None else ""
    head = f"id: {event_id}\r\n" if event_id is not None else ""
    return f"{head}event: message\r\ndata: {data}\r\n\r\n".encode()


@dataclass(frozen=True, slots=True)
class Routed:
    """A message on its way to a client, with the event id it was stored under when it arrived."""

    event_id: int
    message: Message


class Stream:
    """Where the messages of one request (or of the standalone stream) go right now."""

    def __init__(self) -> None:
        self.send: MemoryObjectSendStream[Routed] | None = None
        self.done = False


def is_message(value: Any) -> bool:
    """Whether ``value`` is a JSON-RPC message a batch may carry."""
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


def no_use() -> None:
    """A use of no seat (a session outside any ledger)."""
    return None


CLOSED: Final = Routed(-1, {})


async def next_routed(receiver: MemoryObjectReceiveStream[Routed], timeout: float) -> Routed | None:
    """The next message, ``CLOSED`` when the stream ended, None after ``timeout`` (a ping is due)."""
    with anyio.move_on_after(timeout):
        try:
            return await receiver.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return CLOSED
    return None


async def write_chunk(send: Send, data: bytes, gone: Gone, *, more: bool = True) -> bool:
    """Write a chunk of an SSE response; False once the client has gone."""
    if gone.is_set():
        return False
    try:
        await send({"type": "http.response.body", "body": data, "more_body": more})
    except OSError:
        return False
    return True


WATCH_AFTER_S: Final = 0.25
"""Seconds a request's stream stays open before a task starts watching for its client leaving."""


class Gone:
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
async def disconnect_watch(receive: Receive, gone: Gone | None = None) -> AsyncIterator[Gone]:
    """Sets ``gone`` once the client of the request leaves (its ``http.disconnect``)."""
    gone = gone or Gone()

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


class StreamStore:
    """A session's SSE streams: each event stored for resumption, a stream replayed and followed live.

    ``LegacySession`` sets the state in its ``__init__`` and routes messages into the streams.
    """

    _streams: dict[StreamKey, Stream]
    _events: OrderedDict[int, tuple[StreamKey, Message]]
    _event_ids: int
    _sid: tuple[bytes, bytes]
    _link: HandshakeView | None

    def _store(self, target: StreamKey, msg: Message) -> int:
        self._event_ids += 1
        self._events[self._event_ids] = (target, msg)
        while len(self._events) > MAX_EVENTS:
            self._events.popitem(last=False)
        return self._event_ids

    def _leaving(self, key: StreamKey, stream: Stream) -> Callable[[], None]:
        """What the client reading ``key``'s stream leaving means: a call still held for an approval
        dies with it, unless its answer came or a resuming client has taken the stream over."""
        reader = stream.send

        def left() -> None:
            if self._link is not None and not stream.done and stream.send is reader:
                self._link.withdraw(key[1], "the caller's HTTP request disconnected before an answer")

        return left

    async def _emit(
        self, key: StreamKey, stream: Stream, item: Routed, send: Send, gone: Gone, *, head: bytes = b""
    ) -> bool:
        """Write one message of a stream (a request's, or the resumed standalone one), after ``head``
        (its priming event, when not yet written); True at its end."""
        if item is CLOSED:
            # Taken over by a resuming client, or the session ended (which marks it done).
            await write_chunk(send, head, gone, more=False)
            return True
        final = is_response(item.message) and key != GET_STREAM
        if final:
            stream.done = True
        data = head + sse_event(item.event_id, item.message)
        return not await write_chunk(send, data, gone, more=not final) or final

    async def _get(self, scope: Scope, receive: Receive, send: Send) -> None:
        _, has_sse = accepts(scope)
        if not has_sse:
            await reply(send, 406, error_body(-32600, "Not Acceptable: Client must accept text/event-stream"))
            return
        last = header(scope, b"last-event-id")
        if last:
            await self._resume(last, receive, send)
            return
        current = self._streams.get(GET_STREAM)
        if current is not None and current.send is not None:
            await reply(send, 409, error_body(-32600, "Conflict: Only one SSE stream is allowed per session"))
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
            stream = Stream()
            if key == GET_STREAM:
                self._streams[key] = stream
        sender, receiver = anyio.create_memory_object_stream[Routed](MAX_EVENTS)
        replay = [(n, m) for n, (k, m) in self._events.items() if k == key and (after is None or n > after)]
        live = not stream.done
        if live:
            # A resuming client takes the stream over from a connection that may not know yet
            # that its client has gone.
            if stream.send is not None and key != GET_STREAM:
                stream.send.close()
            stream.send = sender
        await send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, self._sid]})
        try:
            leaving = self._leaving(key, stream) if live and key != GET_STREAM else None
            async with disconnect_watch(receive, Gone(leaving)) as gone:
                for number, msg in replay if after is not None else []:
                    if not msg:
                        continue  # a priming event
                    if not await write_chunk(send, sse_event(number, msg), gone):
                        return
                    if is_response(msg) and key != GET_STREAM:
                        await write_chunk(send, b"", gone, more=False)
                        return
                if not live:
                    await write_chunk(send, b"", gone, more=False)
                    return
                while True:
                    item = await next_routed(receiver, SSE_DEFER_S)
                    if item is None:
                        if not await write_chunk(send, b": ping\r\n\r\n", gone):
                            return
                        continue
                    if await self._emit(key, stream, item, send, gone):
                        return
        finally:
            if stream.send is sender:
                stream.send = None
            sender.close()
            receiver.close()
