"""The audit trail of tool calls in the state database: written in batches, pruned as it grows, read back.

One row per ``tools/call`` the proxy carried (``CallRecord``): who called which tool on which
server, through which endpoint, when, for how long, and how it ended. Never arguments or
results; the error text was redacted by the server's redactor and is redacted once more here
with every secret the process knows. Retention (``Retention``) is enforced inside each write
batch: rows older than ``max_age_days`` go by the ``at`` index, and past ``max_records`` the
oldest go by id, so a batch costs two indexed deletes whatever the table's size. Calls the
writer could not keep up with are counted in ``meta`` (``UNRECORDED_KEY``), never hidden.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clawplane.secrets import redact
from clawplane.state.db import StateDB
from clawplane.telemetry import CallRecord

__all__ = [
    "MAX_TOOL_CHARS",
    "UNRECORDED_KEY",
    "CallFilter",
    "Retention",
    "call_document",
    "find_calls",
    "iso_ms",
    "iter_calls",
    "unrecorded",
    "write_calls",
]

MAX_TOOL_CHARS = 200
"""A tool name is the caller's choice: longer ones are stored shortened."""
UNRECORDED_KEY = "tool_calls_unrecorded"
_DAY_S = 86_400.0
_COLUMNS = (
    "at, duration_s, endpoint, server, tool, consumer, agent, session, revision, outcome, "
    "error_code, error, held_s, bytes_in, bytes_out"
)
_NAMES = tuple(name.strip() for name in _COLUMNS.split(","))


@dataclass(frozen=True, slots=True)
class Retention:
    """How much of the trail is kept (``Gateway.spec.observability.audit``)."""

    max_records: int
    max_age_days: float


@dataclass(frozen=True, slots=True)
class CallFilter:
    """Which rows ``find_calls`` returns (every field optional; ``since``/``until`` in epoch seconds)."""

    server: str | None = None
    tool: str | None = None
    consumer: str | None = None
    agent: str | None = None
    outcome: str | None = None
    since: float | None = None
    until: float | None = None
    limit: int | None = 50
    """At most this many (None: every match)."""


def _row(record: CallRecord) -> tuple[Any, ...]:
    return (
        record.at,
        record.duration_s,
        record.endpoint,
        record.server,
        (record.target or "")[:MAX_TOOL_CHARS],
        record.consumer,
        record.agent,
        record.session,
        record.revision,
        record.outcome.value,
        record.error_code,
        redact(record.error) if record.error else "",
        record.held_s,
        record.bytes_in,
        record.bytes_out,
    )


def write_calls(
    db: StateDB,
    records: Sequence[CallRecord],
    retention: Retention,
    *,
    unrecorded: int = 0,
    now: float | None = None,
) -> None:
    """Append ``records`` (and add ``unrecorded`` to the count of calls not kept) in one transaction,
    then prune to ``retention``.

    Raises:
        StateError: The disk refused the write.
    """
    cutoff = (time.time() if now is None else now) - retention.max_age_days * _DAY_S
    with db.transaction() as conn:
        conn.executemany(
            f"INSERT INTO tool_calls({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_row(r) for r in records],
        )
        if unrecorded:
            conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) "
                "DO UPDATE SET value = CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER)",
                (UNRECORDED_KEY, str(unrecorded)),
            )
        _prune(conn, retention.max_records, cutoff)


def _prune(conn: sqlite3.Connection, max_records: int, cutoff: float) -> None:
    conn.execute("DELETE FROM tool_calls WHERE at < ?", (cutoff,))
    conn.execute(
        "DELETE FROM tool_calls WHERE id <= (SELECT id FROM tool_calls ORDER BY id DESC LIMIT 1 OFFSET ?)",
        (max_records,),
    )


def find_calls(db: StateDB, wanted: CallFilter) -> list[dict[str, Any]]:
    """Recorded calls matching ``wanted``, newest first, as JSON-ready dicts.

    A database made before the trail existed, opened without migrating, has no rows to give.

    Raises:
        StateError: The database cannot be read.
    """
    return list(iter_calls(db, wanted))


def iter_calls(db: StateDB, wanted: CallFilter, *, page: int = 1000) -> Iterator[dict[str, Any]]:
    """``find_calls`` a page at a time (``limit`` None: every match), for exports of any size.

    Raises:
        StateError: The database cannot be read.
    """
    if not _has_table(db):
        return
    where: list[str] = []
    params: list[Any] = []
    for column in ("server", "tool", "consumer", "agent", "outcome"):
        value = getattr(wanted, column)
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if wanted.since is not None:
        where.append("at >= ?")
        params.append(wanted.since)
    if wanted.until is not None:
        where.append("at <= ?")
        params.append(wanted.until)
    left = wanted.limit
    after: tuple[float, int] | None = None
    while left is None or left > 0:
        # Keyset pages: each one starts below the last row of the one before, whatever was added since.
        clause = [*where, "(at, id) < (?, ?)"] if after is not None else where
        text = f"WHERE {' AND '.join(clause)}" if clause else ""
        size = page if left is None else min(page, left)
        rows = db.query(
            f"SELECT id, {_COLUMNS} FROM tool_calls {text} ORDER BY at DESC, id DESC LIMIT ?",
            (*params, *(after or ()), size),
        )
        yield from (_document(r) for r in rows)
        if len(rows) < size:
            return
        after = (rows[-1]["at"], rows[-1]["id"])
        left = None if left is None else left - len(rows)


def unrecorded(db: StateDB) -> int:
    """Calls the writer dropped because it fell behind (or the disk refused them), since the file was made."""
    rows = db.query("SELECT value FROM meta WHERE key = ?", (UNRECORDED_KEY,))
    try:
        return int(rows[0]["value"]) if rows else 0
    except ValueError:
        return 0


def _has_table(db: StateDB) -> bool:
    return bool(db.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='tool_calls'"))


def iso_ms(at: float) -> str:
    """``at`` (epoch seconds) as ISO-8601 UTC with milliseconds."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def call_document(record: CallRecord) -> dict[str, Any]:
    """``record`` as ``clawplane audit --jsonl`` prints its row (without the row's ``id``): the same
    fields, shortened and redacted as the trail stores them; never arguments or results."""
    document = _document({"id": None, **dict(zip(_NAMES, _row(record), strict=True))})
    del document["id"]
    return document


def _document(row: sqlite3.Row | Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "at": iso_ms(row["at"]),
        "durationMs": round(row["duration_s"] * 1000, 3),
        "endpoint": row["endpoint"],
        "server": row["server"],
        "tool": row["tool"],
        "consumer": row["consumer"],
        "agent": row["agent"],
        "session": row["session"],
        "revision": row["revision"],
        "outcome": row["outcome"],
        "errorCode": row["error_code"],
        "error": row["error"],
        "heldMs": round(row["held_s"] * 1000, 3),
        "bytesIn": row["bytes_in"],
        "bytesOut": row["bytes_out"],
    }
