"""Reading and writing typed records in the state database.

Every text a record carries (errors, condition messages, status fields, audit details) passes
the process's secret redactor on the way in: the one redactor that knows every value this
process resolved, in every encoding.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from clawplane.secrets import redact, redact_data
from clawplane.state.db import StateDB, dumps, utcnow
from clawplane.state.records import (
    AuditRecord,
    ObservedState,
    ProcessRecord,
    ResourceRecord,
    RuntimeRecord,
    ToolRecord,
)


def _resource(r: Any) -> ResourceRecord:
    return ResourceRecord(
        key=r["key"],
        kind=r["kind"],
        name=r["name"],
        config_hash=r["config_hash"],
        generation=r["generation"],
        observed_generation=r["observed_generation"],
        spec=json.loads(r["spec_json"]),
        phase=r["phase"],
        conditions=json.loads(r["conditions_json"]),
        status=json.loads(r["status_json"]),
        updated_at=r["updated_at"],
    )


def _tool(r: Any) -> ToolRecord:
    return ToolRecord(r["raw_name"], r["safe_name"], r["schema_hash"], r["description"])


def load_resource(db: StateDB, key: str) -> ResourceRecord | None:
    """One resource's record (cheaper than ``load_observed`` when applying many resources)."""
    rows = db.query("SELECT * FROM resources WHERE key = ?", (key,))
    return _resource(rows[0]) if rows else None


def load_runtime(db: StateDB, name: str) -> tuple[RuntimeRecord | None, tuple[ToolRecord, ...]]:
    """One runtime's record and its observed tools."""
    rows = db.query("SELECT * FROM runtimes WHERE name = ?", (name,))
    tools = db.query(
        "SELECT * FROM tools WHERE server = ? AND surface = 'observed' ORDER BY raw_name", (name,)
    )
    found = tuple(
        ToolRecord(r["raw_name"], r["safe_name"], r["schema_hash"], r["description"]) for r in tools
    )
    return (_runtime(rows[0]) if rows else None), found


@dataclass
class _Reads:
    """What one connection last read: a pass reads the state several times, and decoding a
    thousand rows' JSON each time was most of an idle supervisor's CPU."""

    stamp: tuple[object, int, int] | None = None
    """``StateDB.change_stamp`` when ``observed`` was read."""
    observed: ObservedState | None = None
    records: dict[tuple[Any, ...], ResourceRecord] = field(default_factory=dict)
    """Resource records by their row, for the rows there were: records are frozen and nothing
    edits the dicts they carry, so an unchanged row hands back the same record."""


_READS: weakref.WeakKeyDictionary[StateDB, _Reads] = weakref.WeakKeyDictionary()


def load_observed(db: StateDB) -> ObservedState:
    """The whole observed state, read in one pass (or not at all when nothing changed since)."""
    reads = _READS.setdefault(db, _Reads())
    stamp = db.change_stamp()
    if reads.observed is None or reads.stamp != stamp:
        reads.observed, reads.stamp = _read_observed(db, reads), stamp
    base = reads.observed
    # Callers get their own dicts; the records in them are frozen and shared.
    return replace(
        base,
        resources=dict(base.resources),
        runtimes=dict(base.runtimes),
        tools_observed=dict(base.tools_observed),
        tools_applied=dict(base.tools_applied),
        outputs=dict(base.outputs),
        tokens=dict(base.tokens),
    )


def _resources(db: StateDB, reads: _Reads) -> dict[str, ResourceRecord]:
    seen: dict[tuple[Any, ...], ResourceRecord] = {}
    for row in db.query("SELECT * FROM resources ORDER BY key"):
        values = tuple(row)
        seen[values] = reads.records.get(values) or _resource(row)
    reads.records = seen  # only the rows there are now: the memo never outgrows the table
    return {rec.key: rec for rec in seen.values()}


def _read_observed(db: StateDB, reads: _Reads) -> ObservedState:
    resources = _resources(db, reads)
    runtimes = {r["name"]: _runtime(r) for r in db.query("SELECT * FROM runtimes ORDER BY name")}
    observed: dict[str, list[ToolRecord]] = {}
    applied: dict[str, list[ToolRecord]] = {}
    for r in db.query("SELECT * FROM tools ORDER BY server, raw_name"):
        target = observed if r["surface"] == "observed" else applied
        target.setdefault(r["server"], []).append(_tool(r))
    outputs = {r["path"]: r["content_hash"] for r in db.query("SELECT path, content_hash FROM outputs")}
    tokens = {r["consumer"]: r["token"] for r in db.query("SELECT consumer, token FROM tokens")}
    return ObservedState(
        resources=resources,
        runtimes=runtimes,
        tools_observed={k: tuple(v) for k, v in observed.items()},
        tools_applied={k: tuple(v) for k, v in applied.items()},
        outputs=outputs,
        tokens=tokens,
    )


def get_meta(db: StateDB, key: str) -> str | None:
    """A value of the ``meta`` table (e.g. ``endpoint_port``)."""
    rows = db.query("SELECT value FROM meta WHERE key = ?", (key,))
    return str(rows[0]["value"]) if rows else None


def set_meta(db: StateDB, key: str, value: str) -> None:
    """Set a value of the ``meta`` table."""
    with db.transaction() as conn:
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def _runtime(r: Any) -> RuntimeRecord:
    return RuntimeRecord(
        name=r["name"],
        config_hash=r["config_hash"],
        hosting=r["hosting"],
        transport=r["transport"],
        phase=r["phase"],
        pid=r["pid"],
        pgid=r["pgid"],
        restarts=r["restarts"],
        last_error=r["last_error"],
        paused_until=r["paused_until"],
        protocol_version=r["protocol_version"],
        server_info=json.loads(r["server_info_json"]) if r["server_info_json"] else None,
        endpoint=r["endpoint"],
        started_at=r["started_at"],
        updated_at=r["updated_at"],
    )


def put_resource(db: StateDB, rec: ResourceRecord) -> None:
    """Insert or replace one resource row."""
    with db.transaction() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO resources VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                rec.key,
                rec.kind,
                rec.name,
                rec.config_hash,
                rec.generation,
                rec.observed_generation,
                dumps(redact_data(rec.spec)),
                rec.phase,
                dumps(redact_data(rec.conditions)),
                dumps(redact_data(rec.status)),
                rec.updated_at or utcnow(),
            ),
        )


def delete_resource(db: StateDB, key: str) -> None:
    """Forget one resource."""
    with db.transaction() as conn:
        conn.execute("DELETE FROM resources WHERE key=?", (key,))


def put_runtime(db: StateDB, rec: RuntimeRecord) -> None:
    """Insert or replace one runtime row."""
    with db.transaction() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO runtimes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                rec.name,
                rec.config_hash,
                rec.hosting,
                rec.transport,
                rec.pid,
                rec.pgid,
                rec.phase,
                rec.restarts,
                redact(rec.last_error) if rec.last_error else rec.last_error,
                rec.paused_until,
                rec.protocol_version,
                dumps(rec.server_info) if rec.server_info is not None else None,
                rec.endpoint,
                rec.started_at,
                rec.updated_at or utcnow(),
            ),
        )


def delete_runtime(db: StateDB, name: str) -> None:
    """Forget one runtime and its tool surfaces."""
    with db.transaction() as conn:
        conn.execute("DELETE FROM runtimes WHERE name=?", (name,))
        conn.execute("DELETE FROM tools WHERE server=?", (name,))


def _redacted(text: str | None) -> str | None:
    return redact(text) if text else text


def set_tools(db: StateDB, server: str, surface: str, tools: Iterable[ToolRecord]) -> None:
    """Replace one server's observed or applied tool surface."""
    with db.transaction() as conn:
        conn.execute("DELETE FROM tools WHERE server=? AND surface=?", (server, surface))
        conn.executemany(
            "INSERT INTO tools VALUES (?,?,?,?,?,?)",
            # A tool description comes from the server: it must not carry a secret into state.db.
            [
                (server, surface, t.raw_name, t.safe_name, t.schema_hash, _redacted(t.description))
                for t in tools
            ],
        )


def put_output(db: StateDB, path: str, content_hash: str) -> None:
    """Record the hash of a rendered file."""
    with db.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO outputs VALUES (?,?,?)", (path, content_hash, utcnow()))


def delete_output(db: StateDB, path: str) -> None:
    """Forget a rendered file."""
    with db.transaction() as conn:
        conn.execute("DELETE FROM outputs WHERE path=?", (path,))


def put_process(db: StateDB, rec: ProcessRecord) -> None:
    """Record a spawned process (again, when its known descendants changed).

    A hosted runtime's row follows: its pid and pgid are those of its newest process, in
    every supervisor mode.
    """
    with db.transaction() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO processes VALUES (?,?,?,?,?,?,?,?,?)",
            (
                rec.pid,
                rec.start_ticks,
                rec.boot_id,
                rec.label,
                rec.pgid,
                rec.cgroup,
                dumps([list(d) for d in rec.descendants]),
                rec.supervisor_pid,
                utcnow(),
            ),
        )
        conn.execute(
            "UPDATE runtimes SET pid=?, pgid=?, updated_at=? "
            "WHERE name=? AND hosting='clawplane' AND (pid IS NOT ? OR pgid IS NOT ?)",
            (rec.pid, rec.pgid, utcnow(), rec.label, rec.pid, rec.pgid),
        )


def delete_process(db: StateDB, rec: ProcessRecord) -> None:
    """Forget a process whose whole tree is gone (and clear it from its runtime's row)."""
    with db.transaction() as conn:
        conn.execute(
            "DELETE FROM processes WHERE pid=? AND start_ticks=? AND boot_id=?",
            (rec.pid, rec.start_ticks, rec.boot_id),
        )
        conn.execute(
            "UPDATE runtimes SET pid=NULL, pgid=NULL, updated_at=? WHERE name=? AND pid=?",
            (utcnow(), rec.label, rec.pid),
        )


def load_processes(db: StateDB) -> list[ProcessRecord]:
    """Every recorded process, oldest first."""
    rows = db.query("SELECT * FROM processes ORDER BY recorded_at, pid")
    return [
        ProcessRecord(
            pid=r["pid"],
            start_ticks=r["start_ticks"],
            boot_id=r["boot_id"],
            label=r["label"],
            pgid=r["pgid"],
            cgroup=r["cgroup"],
            descendants=tuple((int(d[0]), int(d[1]), str(d[2])) for d in json.loads(r["descendants_json"])),
            supervisor_pid=r["supervisor_pid"],
        )
        for r in rows
    ]


def audit_begin(
    db: StateDB,
    *,
    user: str,
    host: str,
    git_commit: str | None,
    plan_hash: str,
    actions: Sequence[dict[str, Any]],
) -> int:
    """Record the start of an apply; returns its audit id."""
    with db.transaction() as conn:
        cur = conn.execute(
            "INSERT INTO audit(started_at, user, host, git_commit, plan_hash, actions_json, outcome) "
            "VALUES (?,?,?,?,?,?,?)",
            (utcnow(), user, host, git_commit, plan_hash, dumps(list(actions)), "running"),
        )
        return int(cur.lastrowid or 0)


def audit_finish(db: StateDB, audit_id: int, *, outcome: str, detail: str = "") -> None:
    """Record how an apply ended."""
    with db.transaction() as conn:
        conn.execute(
            "UPDATE audit SET finished_at=?, outcome=?, detail=? WHERE id=?",
            (utcnow(), outcome, redact(detail), audit_id),
        )


def audit_close_interrupted(db: StateDB, detail: str) -> int:
    """Close every apply still marked running as ``interrupted`` (its supervisor died); returns how many."""
    with db.transaction() as conn:
        cur = conn.execute(
            "UPDATE audit SET finished_at=?, outcome='interrupted', detail=? WHERE outcome='running'",
            (utcnow(), detail),
        )
        return int(cur.rowcount or 0)


def audit_entries(db: StateDB, *, limit: int = 50) -> list[AuditRecord]:
    """The most recent applies, newest first."""
    return [
        AuditRecord(
            id=r["id"],
            started_at=r["started_at"],
            finished_at=r["finished_at"],
            user=r["user"],
            host=r["host"],
            git_commit=r["git_commit"],
            plan_hash=r["plan_hash"],
            actions=json.loads(r["actions_json"]),
            outcome=r["outcome"],
            detail=r["detail"],
        )
        for r in db.query("SELECT * FROM audit ORDER BY id DESC LIMIT ?", (limit,))
    ]


def audit_event(
    db: StateDB,
    *,
    user: str,
    host: str,
    plan_hash: str,
    actions: Sequence[dict[str, Any]],
    outcome: str,
    detail: str = "",
    git_commit: str | None = None,
) -> int:
    """Record something that happened at once (an approval requested or answered); returns its id."""
    now = utcnow()
    with db.transaction() as conn:
        cur = conn.execute(
            "INSERT INTO audit(started_at, finished_at, user, host, git_commit, plan_hash, actions_json, "
            "outcome, detail) VALUES (?,?,?,?,?,?,?,?,?)",
            (now, now, user, host, git_commit, plan_hash, dumps(list(actions)), outcome, detail),
        )
        return int(cur.lastrowid or 0)
