"""A bounded, replayable queue of reconcile events, kept in the state database.

Modelled on OpenClaw's MCP channel bridge (``src/mcp/channel-bridge.ts``): every event gets
a cursor (1, 2, 3, ...), the newest ``QUEUE_LIMIT`` (1,000) are kept and older ones are
dropped, and a reader asks for the events *after* a cursor without consuming them, so any
number of readers can replay the same events. A reader whose cursor fell behind the oldest
kept event is told so with a ``gap`` (what it asked for, the oldest it can still get).

Events live in the state database (0600), so a process other than the supervisor (the
stdio ``clawplane mcp serve``, a dashboard) reads the same queue. Writers in this process
wake waiters at once; events written by another process are noticed within
``poll_interval`` seconds. Event data is redacted by whoever publishes it; every text is
also scrubbed of bearer tokens and known secret values here.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio

from clawplane.secrets import redact
from clawplane.state import StateDB, StateError, utcnow

__all__ = [
    "MAX_PAGE",
    "MAX_WAIT_MS",
    "QUEUE_LIMIT",
    "Event",
    "EventPage",
    "EventQueue",
    "EventType",
    "Gap",
]

QUEUE_LIMIT: Final = 1000
MAX_PAGE: Final = 200
MAX_WAIT_MS: Final = 60_000
DEFAULT_POLL_S: Final = 1.0
"""How often a waiting reader looks for events another process wrote (each look is a query and
a timer: a supervisor idles at a few wake-ups a second, not at the event poll's rate)."""

log = logging.getLogger(__name__)


class EventType:
    """The event types clawplane publishes (strings, so readers need no import)."""

    PASS_STARTED = "pass_started"
    PASS_FINISHED = "pass_finished"
    PHASE_CHANGED = "phase_changed"
    TOOLS_CHANGED = "tools_changed"
    DIAGNOSTICS = "diagnostics"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_RESOLVED = "approval_resolved"


@dataclass(frozen=True, slots=True)
class Event:
    """One event: its cursor, type, time, subject (a resource key, server or approval id) and data."""

    cursor: int
    type: str
    at: str
    subject: str
    data: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"cursor": self.cursor, "type": self.type, "at": self.at, "subject": self.subject,
                "data": dict(self.data)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Gap:
    """Events a reader asked for that were dropped: it asked after ``requested_after_cursor``."""

    requested_after_cursor: int
    oldest_available_cursor: int

    def to_dict(self) -> dict[str, int]:
        """JSON-ready form (OpenClaw's field names)."""
        return {
            "requested_after_cursor": self.requested_after_cursor,
            "oldest_available_cursor": self.oldest_available_cursor,
        }


@dataclass(frozen=True, slots=True)
class EventPage:
    """Events after a cursor, the cursor to ask with next, and a gap when some were dropped."""

    events: tuple[Event, ...]
    next_cursor: int
    gap: Gap | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        doc: dict[str, Any] = {"events": [e.to_dict() for e in self.events], "next_cursor": self.next_cursor}
        if self.gap is not None:
            doc["gap"] = self.gap.to_dict()
        return doc


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {str(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


class EventQueue:
    """The folder's event queue (see the module docstring)."""

    def __init__(
        self, db: StateDB, *, capacity: int = QUEUE_LIMIT, poll_interval: float = DEFAULT_POLL_S
    ) -> None:
        self.db = db
        self.capacity = capacity
        self.poll_interval = poll_interval
        self._changed = anyio.Event()
        self._listeners: list[Callable[[Event], None]] = []
        self.failure: str | None = None
        """Why the last publish could not be stored (a full disk), or None once one could."""

    # -- writing -------------------------------------------------------------------------------
    def publish(self, type: str, subject: str = "", **data: Any) -> Event | None:
        """Append an event (dropping the oldest beyond the capacity) and wake every reader.

        Events are a record of what happened, not part of it: when the database refuses the
        write (a full or read-only disk) the event is lost, ``failure`` says why, and the
        caller (a reconcile pass, a runtime callback) goes on.
        """
        clean = _scrub(data)
        at = utcnow()
        try:
            with self.db.transaction() as conn:
                cur = conn.execute(
                    "INSERT INTO events(at, type, subject, data_json) VALUES (?,?,?,?)",
                    (at, type, redact(subject), json.dumps(clean, sort_keys=True, default=str)),
                )
                cursor = int(cur.lastrowid or 0)
                conn.execute("DELETE FROM events WHERE seq <= ?", (cursor - self.capacity,))
        except StateError as exc:
            if self.failure is None:
                log.warning("cannot record the %s event: %s", type, exc)
            self.failure = str(exc)
            return None
        self.failure = None
        event = Event(cursor, type, at, subject, clean)
        self._wake()
        for listener in list(self._listeners):
            listener(event)
        return event

    def _wake(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``listener`` (synchronously, must not block) for every event published in this process."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    # -- reading -------------------------------------------------------------------------------
    def head(self) -> int:
        """The cursor of the newest event (0 when there is none yet)."""
        rows = self.db.query("SELECT seq FROM sqlite_sequence WHERE name = 'events'")
        return int(rows[0]["seq"]) if rows else 0

    def page(self, after_cursor: int = 0, limit: int = 20) -> EventPage:
        """Up to ``limit`` (at most ``MAX_PAGE``) events after ``after_cursor``, oldest first."""
        limit = max(1, min(limit, MAX_PAGE))
        rows = self.db.query(
            "SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (max(after_cursor, 0), limit)
        )
        events = tuple(_event(r) for r in rows)
        gap = self._gap(after_cursor)
        if events:
            next_cursor = events[-1].cursor
        elif gap is not None:
            next_cursor = gap.oldest_available_cursor - 1
        else:
            next_cursor = max(after_cursor, 0)
        return EventPage(events, next_cursor, gap)

    def recent(self, subjects: Sequence[str], limit: int = 20) -> tuple[Event, ...]:
        """The newest ``limit`` (at most ``MAX_PAGE``) events about any of ``subjects``, newest first."""
        if not subjects:
            return ()
        marks = ",".join("?" * len(subjects))
        rows = self.db.query(
            f"SELECT * FROM events WHERE subject IN ({marks}) ORDER BY seq DESC LIMIT ?",
            (*subjects, max(1, min(limit, MAX_PAGE))),
        )
        return tuple(_event(r) for r in rows)

    def _gap(self, after_cursor: int) -> Gap | None:
        rows = self.db.query("SELECT min(seq) AS oldest FROM events")
        oldest = rows[0]["oldest"] if rows else None
        if oldest is not None and after_cursor < int(oldest) - 1:
            return Gap(after_cursor, int(oldest))
        return None

    async def wait(self, after_cursor: int = 0, *, timeout: float = 30.0, limit: int = 20) -> EventPage:
        """The events after ``after_cursor``, waiting up to ``timeout`` seconds for the first one.

        Returns at once when there are events or a gap; an empty page means the time ran out.
        """
        with anyio.move_on_after(max(0.0, timeout)):
            looked_at = -1
            while True:
                changed = self._changed
                # Events are only ever added (and old ones pruned) with a new head: while the head
                # stays, a page would find what the last one found. One query per poll, not two.
                head = self.head()
                if head != looked_at:
                    page = self.page(after_cursor, limit)
                    if page.events or page.gap is not None:
                        return page
                    looked_at = head
                # Another process may write the queue: look again at least every poll_interval.
                with anyio.move_on_after(self.poll_interval):
                    await changed.wait()
        return self.page(after_cursor, limit)

    async def follow(self, after_cursor: int = 0) -> AsyncIterator[EventPage]:
        """Pages of new events as they come, forever (for SSE streams and notification pumps)."""
        cursor = after_cursor
        while True:
            page = await self.wait(cursor, timeout=MAX_WAIT_MS / 1000, limit=MAX_PAGE)
            if page.events or page.gap is not None:
                yield page
            cursor = page.next_cursor


def _event(row: sqlite3.Row) -> Event:
    return Event(
        cursor=int(row["seq"]),
        type=str(row["type"]),
        at=str(row["at"]),
        subject=str(row["subject"]),
        data=json.loads(row["data_json"] or "{}"),
    )
