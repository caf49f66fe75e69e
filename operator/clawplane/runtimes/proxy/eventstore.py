"""A bounded in-memory event store, so a client can resume a stream with ``Last-Event-ID``.

One store per downstream session. It keeps the newest ``max_events`` SSE events of the
session (all of its streams together); a client that comes back after more than that
was sent resumes from the oldest kept event. An unknown or evicted id replays nothing:
the client then sees the stream continue from now, never an HTTP error.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

__all__ = ["MemoryEventStore"]


class MemoryEventStore(EventStore):
    """Keeps the last ``max_events`` events of one session."""

    def __init__(self, max_events: int = 1024) -> None:
        self._max = max_events
        self._ids = itertools.count(1)
        self._events: OrderedDict[int, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        """Record one event of ``stream_id`` and return its id."""
        number = next(self._ids)
        self._events[number] = (stream_id, message)
        while len(self._events) > self._max:
            self._events.popitem(last=False)
        return str(number)

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send the events of ``last_event_id``'s stream that came after it; returns that stream."""
        try:
            after = int(last_event_id)
        except ValueError:
            return None
        entry = self._events.get(after)
        if entry is None:
            return None
        stream_id = entry[0]
        for number, (stream, message) in list(self._events.items()):
            if number > after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, str(number)))
        return stream_id
