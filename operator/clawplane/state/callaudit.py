"""The recording side of the audit trail: a ``CallSink`` that never makes the proxy wait.

``finished`` runs on the proxy's event loop, so it only puts the record on a bounded queue;
a writer thread with its own connection to the state database takes what has queued and
writes it in one transaction (``calltrail.write_calls``), up to ``AUDIT_BATCH`` rows at a time.
After the first record of a batch it lingers ``AUDIT_LINGER_S`` for more: a transaction per call
would wake the writer for every call and take the interpreter from the proxy each time (the
proxy's median call was a third slower for it).
When the queue is full the call is counted, not kept (``clawplane audit`` and the dashboard
say how many), and the proxy goes on. ``close`` writes what is queued before it returns; a
process killed with SIGKILL loses what was still queued (at most the queue's contents, usually
the last tenth of a second).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clawplane.models import AuditSettings
from clawplane.state.callqueue import CallQueue
from clawplane.state.calltrail import Retention, write_calls
from clawplane.state.db import StateDB, StateError
from clawplane.telemetry import CallRecord

__all__ = ["AUDIT_BATCH", "AUDIT_LINGER_S", "AUDIT_QUEUE_SIZE", "CallAuditor", "Export"]

log = logging.getLogger(__name__)
AUDIT_QUEUE_SIZE = 10_000
AUDIT_BATCH = 500
AUDIT_LINGER_S = 0.1
Export = Callable[[Sequence[CallRecord]], None]
"""Also hands each written batch on (the OTLP logs export)."""


@dataclass(frozen=True, slots=True)
class _Settings:
    enabled: bool
    retention: Retention
    export: Export | None


class CallAuditor(CallQueue):
    """A ``CallSink`` that keeps every ``tools/call`` in the state database's ``tool_calls`` table."""

    def __init__(
        self,
        state_dir: Path,
        settings: AuditSettings | None = None,
        *,
        queue_size: int = AUDIT_QUEUE_SIZE,
        batch: int = AUDIT_BATCH,
        linger: float = AUDIT_LINGER_S,
    ) -> None:
        super().__init__(what="call-audit", queue_size=queue_size, batch=batch, linger=linger)
        self._state_dir = state_dir
        self._settings = _Settings(True, Retention(0, 0), None)
        self.configure(settings or AuditSettings())
        self._db: StateDB | None = None

    def configure(self, settings: AuditSettings, export: Export | None = None) -> None:
        """Follow the Gateway's ``spec.observability.audit`` (and export batches with ``export``)."""
        retention = Retention(settings.max_records, settings.max_age_days)
        self._settings = _Settings(settings.enabled, retention, export)

    @property
    def enabled(self) -> bool:
        """Whether calls are recorded (``audit.enabled``)."""
        return self._settings.enabled

    def _accepts(self) -> bool:
        return self._settings.enabled

    def start(self) -> None:
        """Open the writer's own connection and start writing.

        Raises:
            StateError: The state database cannot be opened.
        """
        self._db = StateDB.open(self._state_dir)
        self._start_writer()

    def close(self, timeout: float = 30.0) -> None:
        """Write what is queued, stop the writer and close its connection."""
        if self._stop_writer(timeout) and self._db is not None:
            self._db.close()

    def _write(self, records: list[CallRecord]) -> None:
        settings = self._settings
        dropped = self._take_dropped()
        if not records and not dropped:
            return
        assert self._db is not None
        try:
            if self._db.replaced() is not None:  # state.db deleted or swapped: write where it is now
                self._db.reopen()
            write_calls(self._db, records, settings.retention, unrecorded=dropped)
        except Exception as exc:  # the writer must outlive one bad batch (a full disk, a lock)
            if isinstance(exc, StateError):
                log.warning("could not record %d tool call(s) in the audit trail: %s", len(records), exc)
            else:
                log.exception("could not record %d tool call(s) in the audit trail", len(records))
            with self._lock:  # counted in the database with the next batch that can be written
                self._dropped += dropped + len(records)
                self.unrecorded += len(records)
            return
        if settings.export is not None and records:
            try:
                settings.export(records)
            except Exception:
                log.exception("could not export %d tool call(s) as OTLP logs", len(records))
