"""The state database: round trips, schema checks, the apply lock and the audit log."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest

from clawplane.state import FolderLock, ResourceRecord, RuntimeRecord, StateDB, StateError, ToolRecord, store


def test_round_trip_of_every_record(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    store.put_resource(db, ResourceRecord("Agent/a", "Agent", "a", "h1", 1, 1, {"skills": []}, "Ready",
                                          [{"type": "Ready", "status": "True"}], {"promptChars": 3}))
    store.put_runtime(db, RuntimeRecord("s", "h2", "clawplane", "stdio", "ready", pid=42, restarts=2))
    store.set_tools(db, "s", "observed", [ToolRecord("read", "s__read", "abc")])
    store.put_output(db, "openclaw.json", "d1")
    observed = store.load_observed(StateDB.open(tmp_path))
    assert observed.resources["Agent/a"].status == {"promptChars": 3}
    assert observed.runtimes["s"].pid == 42 and observed.runtimes["s"].restarts == 2
    assert observed.tools_observed["s"] == (ToolRecord("read", "s__read", "abc"),)
    assert observed.outputs == {"openclaw.json": "d1"}


def test_fingerprint_changes_when_observed_state_changes(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    before = store.load_observed(db).fingerprint()
    store.set_tools(db, "s", "observed", [ToolRecord("read", "s__read", "abc")])
    assert store.load_observed(db).fingerprint() != before


def test_unchanged_rows_are_not_decoded_again_and_changed_ones_are(tmp_path: Path) -> None:
    # A pass reads the state several times; decoding every row's JSON each time was most of an
    # idle supervisor's CPU. Same row, same record; a changed or deleted row is read afresh.
    db = StateDB.open(tmp_path)
    for name in ("a", "b"):
        store.put_resource(db, ResourceRecord(f"Agent/{name}", "Agent", name, "h1", 1, 1, {"skills": [name]},
                                              "Ready", [], {}))
    first = store.load_observed(db).resources
    store.put_resource(db, ResourceRecord("Agent/b", "Agent", "b", "h2", 2, 2, {"skills": ["new"]}, "Ready", [], {}))
    second = store.load_observed(db).resources
    assert second["Agent/a"] is first["Agent/a"]
    assert second["Agent/b"] is not first["Agent/b"] and second["Agent/b"].spec == {"skills": ["new"]}
    store.delete_resource(db, "Agent/a")
    assert list(store.load_observed(db).resources) == ["Agent/b"]
    assert list(store.load_observed(StateDB.open(tmp_path)).resources) == ["Agent/b"]


def test_the_observed_state_is_read_again_after_any_connection_writes(tmp_path: Path) -> None:
    db, other = StateDB.open(tmp_path), StateDB.open(tmp_path)
    first = store.load_observed(db)
    again = store.load_observed(db)
    assert again == first and again.resources is not first.resources  # callers own their dicts
    again.resources.clear()
    assert store.load_observed(db) == first
    store.put_output(other, "openclaw.json", "d1")  # another connection (another process) commits
    assert store.load_observed(db).outputs == {"openclaw.json": "d1"}
    store.put_runtime(db, RuntimeRecord("s", "h2", "clawplane", "stdio", "ready", pid=42))
    assert store.load_observed(db).runtimes["s"].pid == 42
    store.put_runtime(db, RuntimeRecord("s", "h2", "clawplane", "stdio", "ready", pid=43))
    assert store.load_observed(db).runtimes["s"].pid == 43
    assert store.load_observed(other).runtimes["s"].pid == 43


def test_newer_schema_is_refused_with_the_way_out(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    with db.transaction() as conn:
        conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    db.close()
    with pytest.raises(StateError, match="newer than this clawplane understands"):
        StateDB.open(tmp_path)


def test_corrupt_database_is_moved_aside_with_a_message_never_silently_replaced(tmp_path: Path) -> None:
    garbage = b"this is not a database at all" * 100
    (tmp_path / "state.db").write_bytes(garbage)
    with pytest.raises(StateError, match="moves it aside"):
        StateDB.open(tmp_path, create=False)
    db = StateDB.open(tmp_path)
    assert db.recovered is not None and "moved it to" in db.recovered
    aside = list(tmp_path.glob("state.db.corrupt-*"))
    assert [p.read_bytes() for p in aside] == [garbage]
    assert store.audit_entries(db) == []


def test_a_truncated_database_is_not_silently_a_fresh_one(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    store.audit_begin(db, user="u", host="h", git_commit=None, plan_hash="p", actions=[])
    db.close()
    (tmp_path / "state.db").write_bytes(b"")
    reopened = StateDB.open(tmp_path)
    assert reopened.recovered is not None and "empty" in reopened.recovered


def test_every_state_file_is_private_whatever_the_umask(tmp_path: Path) -> None:
    import os
    import stat

    old = os.umask(0)
    try:
        state = tmp_path / "a" / "state"
        db = StateDB.open(state)
        store.put_output(db, "x", "y")
        with FolderLock(state):
            pass
    finally:
        os.umask(old)
    for path in [tmp_path / "a", *(tmp_path / "a").rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, (path, oct(mode))


def test_a_replaced_database_is_noticed_and_reopened(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    assert db.replaced() is None
    (tmp_path / "state.db").unlink()
    assert db.replaced() == "was deleted"
    db.reopen()
    assert db.replaced() is None
    store.put_output(db, "x", "y")
    assert store.load_observed(StateDB.open(tmp_path)).outputs == {"x": "y"}


def test_an_interrupted_apply_is_closed_as_interrupted(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    store.audit_begin(db, user="u", host="h", git_commit=None, plan_hash="p", actions=[])
    assert store.audit_close_interrupted(db, "the supervisor died") == 1
    entry = store.audit_entries(db)[0]
    assert entry.outcome == "interrupted" and entry.finished_at is not None


def test_missing_database_without_create(tmp_path: Path) -> None:
    with pytest.raises(StateError, match="run `clawplane apply` first"):
        StateDB.open(tmp_path, create=False)


def test_second_lock_fails_fast_naming_the_holder(tmp_path: Path) -> None:
    holder = f"another `clawplane apply` is running for this folder (pid {os.getpid()}: "
    with FolderLock(tmp_path), pytest.raises(StateError, match=re.escape(holder)):
        FolderLock(tmp_path).acquire()
    with FolderLock(tmp_path, "supervisor.lock"), pytest.raises(StateError, match="a supervisor already runs"):
        FolderLock(tmp_path, "supervisor.lock").acquire()
    with FolderLock(tmp_path):  # released: can be taken again
        pass


def test_audit_log_records_start_and_outcome(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    audit_id = store.audit_begin(db, user="u", host="h", git_commit=None, plan_hash="p",
                                 actions=[{"key": "Agent/a", "action": "create"}])
    store.audit_finish(db, audit_id, outcome="success")
    [entry] = store.audit_entries(db)
    assert entry.outcome == "success" and entry.finished_at and entry.actions[0]["key"] == "Agent/a"


def test_readers_see_committed_data_while_a_writer_holds_a_transaction(tmp_path: Path) -> None:
    writer = StateDB.open(tmp_path)
    store.put_output(writer, "a", "1")
    reader = StateDB.open(tmp_path)
    with writer.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO outputs VALUES ('b', '2', 'now')")
        assert store.load_observed(reader).outputs == {"a": "1"}  # WAL: no blocking, no dirty read
    assert store.load_observed(reader).outputs == {"a": "1", "b": "2"}
    _ = sqlite3
