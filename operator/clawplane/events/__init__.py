"""clawplane.events: the folder's bounded, replayable queue of reconcile events.

``EventQueue(db)`` — ``publish(type, subject, **data)``, ``page(after_cursor, limit)``,
``wait(after_cursor, timeout=…)`` and ``follow(after_cursor)`` (an async iterator, for SSE
streams and MCP notifications). Events are plain values (``Event``, ``EventPage``, ``Gap``)
with ``to_dict()``; a web UI lists and follows them with a cursor without going through MCP.
"""

from clawplane.events.queue import (
    MAX_PAGE,
    MAX_WAIT_MS,
    QUEUE_LIMIT,
    Event,
    EventPage,
    EventQueue,
    EventType,
    Gap,
)

__all__ = ["MAX_PAGE", "MAX_WAIT_MS", "QUEUE_LIMIT", "Event", "EventPage", "EventQueue", "EventType", "Gap"]
