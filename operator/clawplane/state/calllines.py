"""The audit trail as a stream: a JSON line per finished ``tools/call``, for a process with no state database.

``clawplane bridge`` in a pod has no state directory to keep ``CallAuditor``'s table in; its trail
is its log (``kubectl logs``, then whatever collects the cluster's logs). Each line is the document
``clawplane audit --jsonl`` prints for a row (``calltrail.call_document``: the same fields, the
error redacted; never arguments or results) with ``"event": "clawplane.tool_call"`` so a log
pipeline can pick the lines out. As ``CallAuditor`` does, ``finished`` only queues the record: a
writer thread writes what has queued (a full pipe stalls the writer, never the proxy), hands each
batch to ``export`` (the OTLP logs export) and counts what a full queue made it drop.
"""

from __future__ import annotations

import json
import logging
from typing import TextIO

from clawplane.state.callaudit import AUDIT_BATCH, AUDIT_QUEUE_SIZE, Export
from clawplane.state.callqueue import CallQueue
from clawplane.state.calltrail import call_document
from clawplane.telemetry import TOOL_CALL_EVENT, CallRecord

__all__ = ["EVENT_KEY", "AuditLines"]

log = logging.getLogger(__name__)
EVENT_KEY = "event"
"""Each line's ``event`` is ``TOOL_CALL_EVENT``, the OTLP log records' ``event_name`` too."""


class AuditLines(CallQueue):
    """A ``CallSink`` writing each finished ``tools/call`` to ``stream`` (None: only ``export`` it)."""

    def __init__(
        self,
        stream: TextIO | None,
        export: Export | None = None,
        *,
        queue_size: int = AUDIT_QUEUE_SIZE,
        batch: int = AUDIT_BATCH,
    ) -> None:
        super().__init__(what="audit-lines", queue_size=queue_size, batch=batch)
        self._stream = stream
        self._export = export
        self._start_writer()

    def close(self, timeout: float = 10.0) -> None:
        """Write and export what is queued, then stop the writer."""
        self._stop_writer(timeout)

    def _write(self, records: list[CallRecord]) -> None:
        dropped = self._take_dropped()
        if dropped:
            log.warning("%d tool call(s) left out of the audit log: its reader fell behind", dropped)
        if not records:
            return
        if self._stream is not None:
            text = "".join(
                json.dumps({EVENT_KEY: TOOL_CALL_EVENT, **call_document(r)}, separators=(",", ":")) + "\n"
                for r in records
            )
            try:
                self._stream.write(text)
                self._stream.flush()
            except (OSError, ValueError) as exc:  # a closed stdout must not end the writer
                log.warning("could not write %d tool call(s) to the audit log: %s", len(records), exc)
        if self._export is not None:
            try:
                self._export(records)
            except Exception:
                log.exception("could not export %d tool call(s) as OTLP logs", len(records))
