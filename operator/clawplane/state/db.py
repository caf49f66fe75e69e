"""The embedded state database: observed runtimes, tool surfaces, status, outputs and audit.

SQLite in WAL mode so ``status`` and ``plan`` can read while an apply writes. Every
write goes through a short transaction. The directory is 0700 and every file 0600,
whatever the umask, and it is used only when no other user could aim its writes (a real
directory, ours alone, in parents nobody else can swap it out of; no links for its files:
``open_state_dir``). A new database is built beside its final name and renamed into
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

from clawplane._utils.safedir import SafeDir, UnsafePathError, open_dir

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
        try:
            folder = open_state_dir(state_dir, create=create)
        except FileNotFoundError:
            missing = state_dir / DB_NAME
            raise StateError(f"no state database at {missing}; run `clawplane apply` first") from None
        with folder:
            path = folder.path / DB_NAME
            if folder.lstat(DB_NAME) is None and not create:
                raise StateError(f"no state database at {path}; run `clawplane apply` first")
            _check_files(folder)
            recovered = None
            if folder.lstat(DB_NAME) is not None:
                try:
                    return cls._open_existing(folder, migrate=create)
                except CorruptStateError as exc:
                    if not create:
                        raise StateError(
                            f"state database {path} is corrupt ({exc}); `clawplane plan` or `apply` moves it "
                            "aside and starts a fresh one"
                        ) from None
                    recovered = _move_aside(folder, str(exc))
            _create(folder)
            db = cls._open_existing(folder, migrate=True)
            db.recovered = recovered
            return db

    @classmethod
    def _open_existing(cls, folder: SafeDir, *, migrate: bool) -> StateDB:
        path = folder.path / DB_NAME
        info = folder.lstat(DB_NAME)
        if info is None or info.st_size == 0:
            raise CorruptStateError("the file is empty (truncated?)")
        # SQLite opens by name (it has no openat): the folder was checked just now, so no other
        # user can swap what the name leads to, and _check_files refused links in it.
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
        try:
            for name in _FILES:
                folder.tighten(name)
        except UnsafePathError as exc:
            db.close()
            raise StateError(str(exc)) from None
        except OSError:
            pass  # a mode it cannot change (a read-only disk) is no reason not to read it
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


def open_state_dir(state_dir: Path, *, create: bool = True) -> SafeDir:
    """The state directory, opened (and with ``create`` made) only if no other user could aim our writes.

    It must be a real directory (not a link), owned by this user (or root) and writable by
    nobody else, in parents that no other user could rename it out of; it is made 0700.

    Raises:
        StateError: It is not safe, or cannot be made (the message says why and what to do).
        FileNotFoundError: It is missing and ``create`` is False.
    """
    try:
        return open_dir(state_dir, create=create, option="--state-dir DIR")
    except UnsafePathError as exc:
        raise StateError(str(exc)) from None
    except FileNotFoundError:
        if not create:
            raise
        raise StateError(
            f"cannot create the state directory {state_dir}: a parent is missing; pass --state-dir"
        ) from None
    except OSError as exc:
        verb = "create" if create else "open"
        raise StateError(
            f"cannot {verb} the state directory {state_dir}: {exc.strerror or exc}; "
            "make its parent writable or pass --state-dir"
        ) from None


def prepare_state_dir(state_dir: Path) -> None:
    """Create the state directory (0700) or check and tighten an existing one (see ``open_state_dir``).

    Raises:
        StateError: It cannot be created, or another user could aim writes there.
    """
    open_state_dir(state_dir).close()


_FILES = (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm", DB_NAME + "-journal")


def _check_files(folder: SafeDir) -> None:
    """Refuse a database whose files are links or not ours: SQLite would follow or trust them.

    Checked without opening them: another connection of this process may hold POSIX locks
    on them, which closing any descriptor of the file would drop (and corrupt the WAL).
    """
    for name in _FILES:
        try:
            folder.check_file(name)
        except UnsafePathError as exc:
            raise StateError(str(exc)) from None
        except OSError as exc:
            raise _disk_error(folder.path / name, exc) from None


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _create(folder: SafeDir) -> None:
    """Write a fresh database beside ``state.db`` and rename it into place (never half-made)."""
    tmp = f".{DB_NAME}.{os.getpid()}.new"
    path = folder.path / DB_NAME
    try:
        folder.unlink(tmp)
        os.close(folder.open_file(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL))  # nobody has it open yet
        conn = sqlite3.connect(folder.path / tmp, isolation_level=None)
        try:
            conn.executescript(_schema_sql())
            conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        finally:
            conn.close()
        folder.rename(tmp, DB_NAME)
        folder.sync()
    except (OSError, sqlite3.Error) as exc:
        with contextlib.suppress(OSError):
            folder.unlink(tmp)
        raise _disk_error(path, exc) from None


def _move_aside(folder: SafeDir, why: str) -> str:
    path = folder.path / DB_NAME
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = f"{DB_NAME}.corrupt-{stamp}"
    try:
        folder.rename(DB_NAME, target)
        for suffix in ("-wal", "-shm"):
            if folder.lstat(DB_NAME + suffix) is not None:
                folder.rename(DB_NAME + suffix, target + suffix)
    except OSError as exc:
        raise StateError(
            f"state database {path} is corrupt ({why}) and cannot be moved aside ({exc.strerror}); "
            f"move it away yourself (mv {path} {folder.path / target}) and run the command again"
        ) from None
    return (
        f"state database {path} was corrupt ({why}); moved it to {folder.path / target} and started a "
        "fresh one (the old audit history is in that file)"
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
