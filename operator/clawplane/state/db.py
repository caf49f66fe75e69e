"""The embedded state database: observed runtimes, tool surfaces, status, outputs and audit.

SQLite in WAL mode so ``status`` and ``plan`` can read while an apply writes. Every
write goes through a short transaction. The directory is 0700 and every file 0600,
whatever the umask. A new database is built beside its final name and renamed into
place, so a file that is there is never half-made. Opening checks the schema version
(a newer one is refused with what to do) and the file's integrity: a corrupt database is
moved aside with a message, never silently replaced. A database that the disk refuses
(full, read-only) gives a ``StateError`` that says so. ``replaced`` tells a long-running
supervisor that the file under its connection was deleted or swapped. Nothing stored
here is a secret value: callers pass redacted specs and digests, and the store redacts
every text it writes once more.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import resources as pkg_resources
from pathlib import Path
from typing import Any

from clawplane._utils.private import (
    PRIVATE_DIR_MODE,
    PRIVATE_FILE_MODE,
    make_private_dirs,
    open_private,
    tighten,
)

SCHEMA_VERSION = 1
DB_NAME = "state.db"


class StateError(Exception):
    """The state database cannot be used; the message says why and what to do."""


def utcnow() -> str:
    """Current time as an ISO-8601 UTC string (second precision)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _schema_sql() -> str:
    return (pkg_resources.files("clawplane.state") / "schema.sql").read_text(encoding="utf-8")


_OPEN: set[sqlite3.Connection] = set()


@atexit.register
def _close_all() -> None:
    # Quick commands end with the collector off and their objects frozen: a connection whose
    # statements sit in an uncollected cycle is never really closed, and its WAL stays for the
    # next opener to replay (into a file it may then find corrupt). Closed here, the last
    # connection checkpoints the WAL and removes it.
    for conn in list(_OPEN):
        with contextlib.suppress(sqlite3.Error):
            conn.close()
    _OPEN.clear()


class StateDB:
    """A connection to one folder's state database."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        _OPEN.add(conn)
        self.path = path
        self.recovered: str | None = None
        """Set when a corrupt database was moved aside on open: what happened, for the user."""
        self._identity = _identity(path)

    @classmethod
    def open(cls, state_dir: Path, *, create: bool = True) -> StateDB:
        """Open (and with ``create`` initialise) ``state_dir/state.db``.

        A corrupt database is moved aside (``state.db.corrupt-<time>``) and a fresh one is
        created, with ``recovered`` saying so; without ``create`` it is refused instead.

        Raises:
            StateError: No database (without ``create``), a newer schema, or the state
                directory cannot be used (read-only, full, not ours); the message says what to do.
        """
        path = state_dir / DB_NAME
        if not path.exists() and not create:
            raise StateError(f"no state database at {path}; run `clawplane apply` first")
        if create:
            prepare_state_dir(state_dir)
        recovered = None
        if path.exists():
            try:
                return cls._open_existing(path, migrate=create)
            except CorruptStateError as exc:
                if not create:
                    raise StateError(
                        f"state database {path} is corrupt ({exc}); `clawplane plan` or `apply` moves it "
                        "aside and starts a fresh one"
                    ) from None
                recovered = _move_aside(path, str(exc))
        _create(path)
        db = cls._open_existing(path, migrate=True)
        db.recovered = recovered
        return db

    @classmethod
    def _open_existing(cls, path: Path, *, migrate: bool) -> StateDB:
        if path.stat().st_size == 0:
            raise CorruptStateError("the file is empty (truncated?)")
        try:
            conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise _disk_error(path, exc) from None
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            db = cls(conn, path)
            db._check(migrate=migrate)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if _is_corruption(exc):
                raise CorruptStateError(str(exc)) from None
            raise _disk_error(path, exc) from None
        except BaseException:
            conn.close()
            raise
        for suffix in ("-wal", "-shm"):
            tighten(path.with_name(path.name + suffix), PRIVATE_FILE_MODE)
        tighten(path, PRIVATE_FILE_MODE)
        return db

    def _check(self, *, migrate: bool) -> None:
        has_meta = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        if has_meta is None:
            raise CorruptStateError("it is not a clawplane state database (no schema version)")
        row = self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = int(row["value"]) if row else 0
        if version > SCHEMA_VERSION:
            raise StateError(
                f"state database {self.path} has schema version {version}, newer than this clawplane "
                f"understands ({SCHEMA_VERSION}); upgrade clawplane, or move the database aside to start over"
            )
        if version < 1:
            raise CorruptStateError("it has no schema version")
        integrity = self._conn.execute("PRAGMA quick_check").fetchone()[0]
        if integrity != "ok":
            raise CorruptStateError(f"integrity check failed: {integrity}")
        if migrate:
            # Every table is CREATE TABLE IF NOT EXISTS: tables added since the file was made appear.
            self._conn.executescript(_schema_sql())

    # -- the file under the connection ------------------------------------------------------
    def replaced(self) -> str | None:
        """Why the file at ``path`` is no longer the one this connection has open, or None."""
        now = _identity(self.path)
        if now == self._identity:
            return None
        return "was deleted" if now is None else "was replaced by another file"

    def reopen(self) -> None:
        """Close the connection and open whatever is at ``path`` now (a fresh database if none)."""
        fresh = StateDB.open(self.path.parent)
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()
        _OPEN.discard(self._conn)
        self._conn, self._identity, self.recovered = fresh._conn, fresh._identity, fresh.recovered

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()
        _OPEN.discard(self._conn)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that commits on success and rolls back on error.

        Raises:
            StateError: The disk refused the write (full, read-only); the message says so.
        """
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise _disk_error(self.path, exc) from None
        try:
            yield self._conn
        except sqlite3.OperationalError as exc:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise _disk_error(self.path, exc) from None
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise
        try:
            self._conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise _disk_error(self.path, exc) from None

    def change_stamp(self) -> tuple[object, int, int]:
        """Equal between two calls only if no connection changed the database in between.

        The connection itself (``reopen`` swaps it), its own ``total_changes`` and SQLite's
        ``data_version`` (which moves when another connection commits).
        """
        try:
            version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.OperationalError as exc:
            raise _disk_error(self.path, exc) from None
        return self._conn, self._conn.total_changes, int(version)

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Run a read query."""
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            raise _disk_error(self.path, exc) from None

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every row of every table (for tests and debugging; holds no secrets by design)."""
        tables = [r["name"] for r in self.query("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            t: [dict(r) for r in self.query(f"SELECT * FROM {t}")] for t in tables if t != "sqlite_sequence"
        }


class CorruptStateError(StateError):
    """The file is not a usable state database (moved aside on open with ``create``)."""


def prepare_state_dir(state_dir: Path) -> None:
    """Create the state directory (0700) or tighten an existing one.

    Raises:
        StateError: It cannot be created or is not a directory.
    """
    try:
        make_private_dirs(state_dir)
    except OSError as exc:
        raise StateError(
            f"cannot create the state directory {state_dir}: {exc.strerror}; "
            "make its parent writable or pass --state-dir"
        ) from None
    if not state_dir.is_dir():
        raise StateError(f"the state directory {state_dir} is not a directory; pass --state-dir")
    tighten(state_dir, PRIVATE_DIR_MODE)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _create(path: Path) -> None:
    """Write a fresh database beside ``path`` and rename it into place (never half-made)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    try:
        tmp.unlink(missing_ok=True)
        os.close(open_private(tmp, os.O_RDWR | os.O_EXCL))
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.executescript(_schema_sql())
            conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        finally:
            conn.close()
        os.replace(tmp, path)
    except (OSError, sqlite3.Error) as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise _disk_error(path, exc) from None


def _move_aside(path: Path, why: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    try:
        os.replace(path, target)
        for suffix in ("-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                os.replace(side, target.with_name(target.name + suffix))
    except OSError as exc:
        raise StateError(
            f"state database {path} is corrupt ({why}) and cannot be moved aside ({exc.strerror}); "
            f"move it away yourself (mv {path} {target}) and run the command again"
        ) from None
    return (
        f"state database {path} was corrupt ({why}); moved it to {target} and started a fresh one "
        "(the old audit history is in that file)"
    )


_CORRUPT_MARKERS = ("malformed", "not a database", "file is encrypted", "integrity check", "no such table")


def _is_corruption(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and any(m in text for m in _CORRUPT_MARKERS)


def _disk_error(path: Path, exc: BaseException) -> StateError:
    """A clear message for a database the disk will not let us use."""
    text = str(exc)
    low = text.lower()
    if "full" in low or getattr(exc, "errno", None) == errno.ENOSPC:
        why = "the disk is full; free some space"
    elif "readonly" in low or "read-only" in low or getattr(exc, "errno", None) == errno.EROFS:
        why = "the file or its directory is read-only; make it writable or pass --state-dir"
    elif "unable to open" in low or isinstance(exc, PermissionError):
        why = "it cannot be opened; check that this user can read and write the state directory"
    elif "locked" in low:
        why = "another process holds it locked; try again"
    else:
        why = "check the disk"
    return StateError(f"cannot use the state database {path} ({text}): {why}")


def dumps(value: Any) -> str:
    """Canonical JSON for storage."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
