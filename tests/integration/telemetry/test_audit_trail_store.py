"""The audit trail's table in a real state database, and ``clawplane audit`` reading it.

Records are written through the real ``CallAuditor`` (its queue and writer thread) into a real
SQLite file; the command runs as a user runs it (``python -m clawplane``). Covered: retention by
count and by age, the count of calls the writer could not keep, an older database gaining the
table, filters, the exact ``--json``/``--jsonl`` shapes, markup-looking tool names shown as text,
and the errors a user can make.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from clawplane.models import AuditSettings
from clawplane.state import StateDB
from clawplane.state.callaudit import CallAuditor
from clawplane.state.calltrail import CallFilter, Retention, find_calls, unrecorded, write_calls
from clawplane.telemetry import CallRecord, Outcome

NOW = time.time()
BASE = CallRecord(
    at=NOW - 60, duration_s=0.0125, endpoint="hosted", server="notes", consumer="openclaw", agent=None,
    session="s-1", revision="2025-11-25", method="tools/call", target="search", outcome=Outcome.OK,
    error_code=None, error="", bytes_in=120, bytes_out=480, held_s=0.0,
)  # fmt: skip
KEYS = [
    "id", "at", "durationMs", "endpoint", "server", "tool", "consumer", "agent", "session", "revision",
    "outcome", "errorCode", "error", "heldMs", "bytesIn", "bytesOut",
]  # fmt: skip


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )  # fmt: skip
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def record_all(state: Path, records: list[CallRecord], **options: Any) -> CallAuditor:
    auditor = CallAuditor(state, **options)
    auditor.start()
    for r in records:
        auditor.finished(None, r)  # type: ignore[arg-type]  # the sink reads only the record
    auditor.close()
    return auditor


def test_a_call_is_one_row_with_every_field_and_the_file_stays_private(tmp_path: Path) -> None:
    state = tmp_path / ".clawplane"
    held = replace(
        BASE, endpoint="agent", agent="writer", consumer="agent:writer", target="write_note",
        outcome=Outcome.REFUSED, error_code=None, held_s=2.5, at=NOW - 30,
    )  # fmt: skip
    record_all(state, [BASE, replace(BASE, method="tools/list", target=None), held])
    db = StateDB.open(state, create=False)
    rows = find_calls(db, CallFilter())
    db.close()
    assert [r["tool"] for r in rows] == ["write_note", "search"]  # newest first; tools/list is not a call
    assert list(rows[1]) == KEYS
    assert rows[1] | {"id": 0, "at": ""} == {
        "id": 0, "at": "", "durationMs": 12.5, "endpoint": "hosted", "server": "notes", "tool": "search",
        "consumer": "openclaw", "agent": None, "session": "s-1", "revision": "2025-11-25", "outcome": "ok",
        "errorCode": None, "error": "", "heldMs": 0.0, "bytesIn": 120, "bytesOut": 480,
    }  # fmt: skip
    assert rows[0]["agent"] == "writer" and rows[0]["heldMs"] == 2500.0 and rows[0]["outcome"] == "refused"
    assert stat.S_IMODE((state / "state.db").stat().st_mode) == 0o600


def test_disabled_records_nothing(tmp_path: Path) -> None:
    state = tmp_path / ".clawplane"
    auditor = CallAuditor(state, AuditSettings(enabled=False))
    auditor.start()
    auditor.finished(None, BASE)  # type: ignore[arg-type]
    auditor.close()
    db = StateDB.open(state, create=False)
    assert find_calls(db, CallFilter()) == [] and unrecorded(db) == 0


def test_retention_keeps_the_newest_max_records(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    retention = Retention(max_records=100, max_age_days=30)
    for batch in range(5):
        write_calls(
            db,
            [replace(BASE, target=f"t{batch}-{n}", at=NOW - 500 + batch * 50 + n) for n in range(50)],
            retention,
        )
    kept = find_calls(db, CallFilter(limit=1000))
    assert len(kept) == 100
    assert kept[0]["tool"] == "t4-49" and kept[-1]["tool"] == "t3-0"


def test_retention_drops_what_is_older_than_max_age(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    day = 86_400
    old = [replace(BASE, target="old", at=NOW - 3 * day), replace(BASE, target="older", at=NOW - 40 * day)]
    write_calls(db, old, Retention(1000, 30), now=NOW)
    assert {r["tool"] for r in find_calls(db, CallFilter())} == {"old"}  # 40 days > 30
    write_calls(db, [replace(BASE, target="new")], Retention(1000, 2), now=NOW)
    assert [r["tool"] for r in find_calls(db, CallFilter())] == ["new"]  # 3 days > 2
    plan = " ".join(str(tuple(r)) for r in db.query("EXPLAIN QUERY PLAN DELETE FROM tool_calls WHERE at < 0"))
    assert "tool_calls_at" in plan  # the age cut is indexed


def test_calls_the_writer_cannot_keep_are_counted_and_shown(tmp_path: Path) -> None:
    """A database locked by another writer stalls the audit writer: its tiny queue overflows, and
    every call is either a row or counted, never silently lost nor waited for."""
    state = tmp_path / ".clawplane"
    StateDB.open(state).close()
    blocker = sqlite3.connect(state / "state.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    auditor = CallAuditor(state, queue_size=8, batch=4)
    auditor.start()
    started = time.perf_counter()
    for n in range(3000):
        auditor.finished(None, replace(BASE, target=f"flood-{n}"))  # type: ignore[arg-type]
    spent = time.perf_counter() - started
    blocker.execute("COMMIT")
    blocker.close()
    auditor.close()
    db = StateDB.open(state, create=False)
    rows = db.query("SELECT COUNT(*) AS n FROM tool_calls")[0]["n"]
    missed = unrecorded(db)
    db.close()
    assert missed > 0 and auditor.unrecorded == missed
    assert rows + missed == 3000
    assert spent < 1.0, f"queuing 3000 calls took {spent:.2f}s: the sink waited for the database"
    shown = cli("audit", str(tmp_path), "--state-dir", str(state), "--limit", "1")
    assert shown.returncode == 0
    assert f"{missed} calls not recorded: the writer fell behind" in shown.stderr


def _previous_schema() -> str:
    """schema.sql as it was before the trail: everything above its table."""
    from importlib import resources

    text = (resources.files("clawplane.state") / "schema.sql").read_text()
    return text.split("-- The audit trail of tool calls", 1)[0]


def test_an_older_database_gains_the_table_and_keeps_its_rows(tmp_path: Path) -> None:
    state = tmp_path / ".clawplane"
    state.mkdir(mode=0o700)
    conn = sqlite3.connect(state / "state.db")
    conn.executescript(_previous_schema())
    conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', '1')")
    conn.execute(
        "INSERT INTO audit(started_at, user, host, plan_hash, actions_json, outcome) "
        "VALUES ('2026-01-01T00:00:00Z', 'u', 'h', 'p', '[]', 'success')"
    )
    conn.commit()
    conn.close()
    os.chmod(state / "state.db", 0o600)
    # Read-only, as `clawplane audit` opens it: no table yet, so no calls, and no error.
    shown = cli("audit", str(tmp_path), "--state-dir", str(state))
    assert shown.returncode == 0 and "no tool calls recorded" in shown.stdout
    record_all(state, [BASE])  # the supervisor's writer opens it to write: it migrates
    db = StateDB.open(state, create=False)
    assert [r["tool"] for r in find_calls(db, CallFilter())] == ["search"]
    assert len(db.query("SELECT * FROM audit")) == 1
    assert db.query("SELECT value FROM meta WHERE key='schema_version'")[0]["value"] == "1"


def test_a_corrupt_database_is_refused_clearly(tmp_path: Path) -> None:
    state = tmp_path / ".clawplane"
    state.mkdir(mode=0o700)
    (state / "state.db").write_bytes(b"not a database at all" * 100)
    os.chmod(state / "state.db", 0o600)
    shown = cli("audit", str(tmp_path), "--state-dir", str(state))
    assert shown.returncode == 1
    assert "is corrupt" in shown.stdout and "moves it aside" in shown.stdout


@pytest.fixture
def trail(tmp_path: Path) -> Path:
    # Ages relative to the test's own start (not the module's import, which xdist may do minutes
    # earlier): the --since/--until windows below are read against the clock when the CLI runs.
    now = time.time()
    state = tmp_path / ".clawplane"
    records = [
        replace(BASE, target="search", at=now - 7200),
        replace(BASE, target="search", at=now - 600, outcome=Outcome.ERROR, error_code=-32000, error="boom"),
        replace(BASE, target="[bold red]fake[/]", at=now - 300, server="other", consumer="codex:alpha"),
        replace(BASE, target="write", at=now - 60, endpoint="agent", agent="alpha", consumer="agent:alpha"),
    ]
    record_all(state, records)
    return state


def _json(state: Path, *args: str) -> Any:
    shown = cli("audit", str(state.parent), "--state-dir", str(state), "--json", *args)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return json.loads(shown.stdout)


def test_filters_select_the_calls_they_name(trail: Path) -> None:
    assert [c["tool"] for c in _json(trail)] == ["write", "[bold red]fake[/]", "search", "search"]
    assert [c["tool"] for c in _json(trail, "--server", "other")] == ["[bold red]fake[/]"]
    assert [c["outcome"] for c in _json(trail, "--tool", "search")] == ["error", "ok"]
    assert [c["tool"] for c in _json(trail, "--consumer", "codex:alpha")] == ["[bold red]fake[/]"]
    assert [c["tool"] for c in _json(trail, "--agent", "alpha")] == ["write"]
    assert [c["errorCode"] for c in _json(trail, "--outcome", "error")] == [-32000]
    assert [c["tool"] for c in _json(trail, "--since", "1h")] == ["write", "[bold red]fake[/]", "search"]
    assert [c["tool"] for c in _json(trail, "--since", "15m", "--until", "2m")] == [
        "[bold red]fake[/]",
        "search",
    ]
    assert len(_json(trail, "--limit", "2")) == 2
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
    assert len(_json(trail, "--since", iso)) == 3


def test_json_and_jsonl_have_one_shape(trail: Path) -> None:
    array = _json(trail)
    assert all(list(c) == KEYS for c in array)
    lines = cli("audit", str(trail.parent), "--state-dir", str(trail), "--jsonl").stdout.splitlines()
    assert [json.loads(line) for line in lines] == array
    assert all(c["at"].endswith("Z") and "." in c["at"] for c in array)


def test_the_table_shows_markup_as_text(trail: Path) -> None:
    shown = cli("audit", str(trail.parent), "--state-dir", str(trail))
    assert shown.returncode == 0
    assert "[bold red]fake[/]" in shown.stdout
    assert "-32000: boom" in shown.stdout


@pytest.mark.parametrize(
    ("args", "cause"),
    [
        (["--since", "yesterday"], "--since 'yesterday': expected a span"),
        (["--until", "5 parsecs"], "--until '5 parsecs': expected a span"),
        (
            ["--outcome", "great"],
            "--outcome 'great': expected one of ok, tool_error, error, refused, cancelled",
        ),
        (["--json", "--jsonl"], "--json and --jsonl: choose one"),
    ],
)
def test_bad_options_exit_2_with_their_cause(trail: Path, args: list[str], cause: str) -> None:
    shown = cli("audit", str(trail.parent), "--state-dir", str(trail), *args)
    assert shown.returncode == 2 and cause in shown.stdout


def test_no_state_says_how_to_get_one(tmp_path: Path) -> None:
    shown = cli("audit", str(tmp_path))
    assert shown.returncode == 1
    assert "no state database" in shown.stdout and f"clawplane run {tmp_path}" in shown.stdout


def test_the_writer_follows_a_state_database_that_was_deleted(tmp_path: Path) -> None:
    state = tmp_path / ".clawplane"
    auditor = CallAuditor(state)
    auditor.start()
    try:
        auditor.finished(None, replace(BASE, target="before"))  # type: ignore[arg-type]
        auditor.flush()
        for name in ("state.db", "state.db-wal", "state.db-shm"):
            (state / name).unlink(missing_ok=True)
        auditor.finished(None, replace(BASE, target="after"))  # type: ignore[arg-type]
    finally:
        auditor.close()
    db = StateDB.open(state, create=False)
    assert [r["tool"] for r in find_calls(db, CallFilter())] == ["after"]
    assert unrecorded(db) == 0


def test_jsonl_exports_every_match_and_stops_quietly_when_the_reader_does(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path / ".clawplane")
    rows = [replace(BASE, target=f"t{n}", at=NOW - 5000 + n) for n in range(5000)]
    write_calls(db, rows, Retention(100_000, 30))
    db.close()
    args = [sys.executable, "-m", "clawplane", "audit", str(tmp_path), "--jsonl"]
    every = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True).stdout.splitlines()
    assert (
        len(every) == 5000
        and json.loads(every[0])["tool"] == "t4999"
        and json.loads(every[-1])["tool"] == "t0"
    )
    assert len(cli("audit", str(tmp_path), "--jsonl", "--limit", "7").stdout.splitlines()) == 7
    assert len(_json(tmp_path / ".clawplane")) == 50  # a table or an array: the latest 50 unless told
    reader = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert reader.stdout is not None and reader.stderr is not None
    assert json.loads(reader.stdout.readline())["tool"] == "t4999"
    reader.stdout.close()  # as `| head -1` does
    assert reader.wait(timeout=120) == 0
    assert reader.stderr.read() == ""
