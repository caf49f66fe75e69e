"""The embedded state database: observed runtimes, tool surfaces, status, outputs and audit.

SQLite in WAL mode so ``status`` and ``plan`` can read while an apply writes. Every
write goes through a short transaction. Opening checks the schema version: a newer
or corrupt database is refused with a message that says what to do, never patched.
Nothing stored here is a secret value: callers pass redacted specs and digests.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import resources as pkg_resources
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
DB_NAME = "state.db"


class StateError(Exception):
    """The state database cannot be used; the message says why and what to do."""


def utcnow() -> str:
    """Current time as an ISO-8601 UTC string (second precision)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _schema_sql() -> str:
    return (pkg_resources.files("clawplane.state") / "schema.sql").read_text(encoding="utf-8")


class StateDB:
    """A connection to one folder's state database."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    @classmethod
    def open(cls, state_dir: Path, *, create: bool = True) -> StateDB:
        """Open (and with ``create`` initialise) ``state_dir/state.db``."""
        path = state_dir / DB_NAME
        if not path.exists() and not create:
            raise StateError(f"no state database at {path}; run `clawplane apply` first")
        state_dir.mkdir(parents=True, exist_ok=True)
        # The database holds the hosted endpoint's tokens: owner only, whatever the umask.
        state_dir.chmod(0o700)
        path.touch(mode=0o600, exist_ok=True)
        path.chmod(0o600)
        try:
            conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            db = cls(conn, path)
            db._check_or_init()
        except sqlite3.DatabaseError as exc:
            raise StateError(
                f"state database {path} is unreadable ({exc}); move it aside "
                f"(mv {path} {path}.broken) and run `clawplane apply` again to rebuild it"
            ) from None
        return db

    def _check_or_init(self) -> None:
        has_meta = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        if has_meta is None:
            self._conn.executescript(_schema_sql())
            self._conn.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            return
        row = self._conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = int(row["value"]) if row else 0
        if version > SCHEMA_VERSION:
            raise StateError(
                f"state database {self.path} has schema version {version}, newer than this clawplane "
                f"understands ({SCHEMA_VERSION}); upgrade clawplane, or move the database aside to start over"
            )
        if version < 1:
            raise StateError(f"state database {self.path} has no schema version; move it aside and re-apply")
        # Tables added since version 1 (all CREATE ... IF NOT EXISTS): older databases gain them.
        self._conn.executescript(_schema_sql())
        integrity = self._conn.execute("PRAGMA quick_check").fetchone()[0]
        if integrity != "ok":
            raise sqlite3.DatabaseError(f"integrity check failed: {integrity}")

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that commits on success and rolls back on error."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Run a read query."""
        return self._conn.execute(sql, params).fetchall()

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every row of every table (for tests and debugging; holds no secrets by design)."""
        tables = [r["name"] for r in self.query("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            t: [dict(r) for r in self.query(f"SELECT * FROM {t}")] for t in tables if t != "sqlite_sequence"
        }


def dumps(value: Any) -> str:
    """Canonical JSON for storage."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
