"""What a ``Mux`` hands out and keeps per request: ``Link``, ``Delivery``, the pending record.

A link is one downstream party's private view of the upstream server (see ``mux``); the ids
and messages helpers here are the ones the mux rewrites traffic with.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from clawplane.runtimes.proxy.gate import CallGate, Departure
from clawplane.runtimes.proxy.wire import Message, RequestId
from clawplane.telemetry import Call, CallSite, CallTelemetry, Outcome

if TYPE_CHECKING:
    from clawplane.runtimes.proxy.mux import Mux

__all__ = [
    "Delivery",
    "Key",
    "Link",
    "Pending",
    "UpstreamGoneError",
    "as_upstream_id",
    "busiest",
    "cancelled_notice",
    "filter_tools",
    "request_key",
]


Key = tuple[type, RequestId]


def request_key(value: RequestId) -> Key:
    """A downstream request's key: JSON-RPC ids 1 and "1" are different requests."""
    return (type(value), value)


class UpstreamGoneError(Exception):
    """The upstream server went away; ``str()`` says why."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """A message for a link, and the link's request it relates to (None: not request-scoped)."""

    message: Message
    related: RequestId | None = None
    size: int = 0
    """The answer's size as the server wrote it (0: not from the server, or not measured)."""


@dataclass(slots=True)
class Pending:
    """A request written upstream: whose it is, under which downstream id, and its progress token."""

    link: Link | None  # None: the mux's own request (e.g. an unsubscribe after a link left)
    downstream_id: RequestId | None
    method: str
    seq: int
    token: tuple[RequestId, RequestId] | None = None  # (upstream, downstream) progress token
    cancelled: bool = False


@dataclass(eq=False)
class Link:
    """One downstream party's private view of the upstream server."""

    mux: Mux
    label: str
    priority: int
    _send: MemoryObjectSendStream[Delivery]
    _receive: MemoryObjectReceiveStream[Delivery]
    tool_allowed: Callable[[str], bool] | None = None
    """The server's declared ``toolFilter``: hidden tools are left out of ``tools/list`` and refused."""
    gate: CallGate | None = None
    """The server's ``toolApproval``: which calls wait for an answer before they are forwarded."""
    closed: anyio.Event = field(default_factory=anyio.Event)
    reason: str | None = None
    pending: dict[Key, int] = field(default_factory=dict)  # downstream id → upstream id
    holds: dict[Key, anyio.CancelScope] = field(default_factory=dict)  # downstream id → its wait
    departures: dict[Key, Departure] = field(default_factory=dict)  # downstream id → its caller's leaving
    site: CallSite | None = None
    """Where this party's requests come from, for telemetry (None: they are not observed)."""
    telemetry: CallTelemetry | None = None
    calls: dict[Key, Call] = field(default_factory=dict)  # downstream id → the call observed
    continues: Callable[[Message], bool] | None = None
    """Whether an answer is one after which its call goes on in another form (a view over the link
    asks again, as ``eras.bridging`` does for a server that refuses the handshake)."""

    async def send(self, msg: Message, *, size: int = 0, headers: Mapping[str, str] | None = None) -> None:
        """Send a message from this party to the server (``size`` bytes on the wire, and the HTTP
        ``headers`` it came with: telemetry's only)."""
        await self.mux._from_link(self, msg, size, headers)

    def observe(self, msg: Message, size: int, headers: Mapping[str, str] | None) -> Call | None:
        """Start observing client request ``msg`` (None: this party is not observed)."""
        if self.telemetry is None or self.site is None:
            return None
        key = request_key(msg["id"])
        going = self.calls.get(key)
        if going is not None:  # the same call again, with the client's input (MRTR): it goes on
            return going
        call = self.telemetry.begin(self.site, msg, size=size, headers=headers)
        if call is not None:
            self.calls[key] = call
        return call

    def abandon(self, request_id: Any, outcome: Outcome) -> None:
        """The observed call ``request_id`` ends unanswered (cancelled, or its caller left)."""
        if self.calls and isinstance(request_id, int | str):
            call = self.calls.pop(request_key(request_id), None)
            if call is not None:
                call.finish(None, outcome)

    async def receive(self) -> Delivery:
        """The next message for this party; ``anyio.EndOfStream`` once the link is closed."""
        return await self._receive.receive()

    def __aiter__(self) -> AsyncIterator[Delivery]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Delivery]:
        while True:
            try:
                yield await self.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return

    async def aclose(self) -> None:
        """Leave: cancel this party's pending requests and drop its subscriptions."""
        await self.mux._detach(self)

    def withdraw(self, request_id: RequestId, reason: str) -> bool:
        """The caller of held call ``request_id`` is gone (``reason``); False when no such call waits."""
        departure = self.departures.get(request_key(request_id))
        if departure is None:
            return False
        departure.leave(reason)
        return True

    def _deliver(self, delivery: Delivery) -> None:
        if self.closed.is_set():
            return
        if self.calls and "method" not in delivery.message:
            self._answered(delivery.message, delivery.size)
        try:
            self._send.send_nowait(delivery)
        except anyio.WouldBlock:
            # A reader this far behind would stall every other party of the server.
            self._end("the client did not read its messages fast enough")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._end("the client went away")

    def _answered(self, msg: Message, size: int = 0) -> None:
        answered = msg.get("id")
        if not isinstance(answered, int | str):
            return
        result = msg.get("result")
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            return  # the call waits for its client's input and is asked again under the same id
        if self.continues is not None and self.continues(msg):
            return
        call = self.calls.pop(request_key(answered), None)
        if call is not None:
            call.finish(msg, size=size)

    def _end(self, reason: str) -> None:
        if not self.closed.is_set():
            self.reason = reason
            self.closed.set()
            self._send.close()
        while self.calls:
            self.calls.popitem()[1].finish(None, Outcome.CANCELLED)


def as_upstream_id(value: Any) -> int | None:
    """The proxy's own (integer) upstream id that ``value`` names, whatever its JSON type.

    A listen frame names its listen request in ``_meta``, not in the JSON-RPC ``id``, and
    servers echo it as they please: ``7``, ``"7"`` or ``7.0`` all mean request 7.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def filter_tools(msg: Message, allowed: Callable[[str], bool]) -> Message:
    """A ``tools/list`` result without the tools ``allowed`` hides (any other message unchanged)."""
    result = msg.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
        return msg
    tools = result["tools"]
    kept = [
        t
        for t in tools
        if not (isinstance(t, dict) and isinstance(t.get("name"), str)) or allowed(t["name"].strip())
    ]
    return {**msg, "result": {**result, "tools": kept}}


def cancelled_notice(upstream_id: int, reason: str) -> Message:
    """The ``notifications/cancelled`` the mux sends upstream for its request ``upstream_id``."""
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": upstream_id, "reason": reason},
    }


# Long-lived requests that must not attract logging or server requests of other calls.
_STREAMING_METHODS = frozenset({"subscriptions/listen"})


def busiest(pending: Iterable[Pending]) -> tuple[Link, RequestId] | None:
    """The link and downstream request the server most likely works for now: the newest pending
    request of the highest-priority link (stdio carries no "related request" field)."""
    best: tuple[int, int, Pending] | None = None
    for item in pending:
        if item.link is None or item.cancelled or item.method in _STREAMING_METHODS:
            continue
        rank = (item.link.priority, item.seq)
        if best is None or rank > best[:2]:
            best = (*rank, item)
    if best is None:
        return None
    found = best[2]
    assert found.link is not None and found.downstream_id is not None
    return found.link, found.downstream_id
