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
import queue
import threading
from typing import TextIO

from clawplane.state.callaudit import AUDIT_BATCH, AUDIT_QUEUE_SIZE, Export
from clawplane.state.calltrail import call_document
from clawplane.telemetry import TOOL_CALL_EVENT, Call, CallRecord

__all__ = ["EVENT_KEY", "AuditLines"]

log = logging.getLogger(__name__)
EVENT_KEY = "event"
"""Each line's ``event`` is ``TOOL_CALL_EVENT``, the OTLP log records' ``event_name`` too."""
_STOP = object()


class AuditLines:
    """A ``CallSink`` writing each finished ``tools/call`` to ``stream`` (None: only ``export`` it)."""

    def __init__(
        self,
        stream: TextIO | None,
        export: Export | None = None,
        *,
        queue_size: int = AUDIT_QUEUE_SIZE,
        batch: int = AUDIT_BATCH,
    ) -> None:
        self._stream = stream
        self._export = export
        self._batch = batch
        self._queue: queue.Queue[CallRecord | object] = queue.Queue(maxsize=queue_size)
        self._lock = threading.Lock()
        self._dropped = 0
        """Calls dropped and not yet said so in the log."""
        self.unrecorded = 0
        """Calls not written since this process started (the queue was full: the reader fell behind)."""
        self._thread = threading.Thread(target=self._run, name="clawplane-audit-lines", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 10.0) -> None:
        """Write and export what is queued, then stop the writer."""
        if not self._thread.is_alive():
            return
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            log.warning(
                "the audit log writer did not drain its queue in %.0fs; calls still queued are lost", timeout
            )
            return
        self._thread.join(timeout)

    def flush(self) -> None:
        """Wait until every call queued so far is written."""
        self._queue.join()

    # -- CallSink ---------------------------------------------------------------------------
    def begin(self, call: Call) -> None:
        """Written when it ends."""

    def forwarded(self, call: Call) -> None:
        """Nothing to write."""

    def held(self, call: Call) -> None:
        """Written when it ends, with how long it was held."""

    def released(self, call: Call, verdict: str) -> None:
        """Written when it ends."""

    def finished(self, call: Call, record: CallRecord) -> None:
        """Queue a finished ``tools/call`` for the writer; count it when the queue is full."""
        if record.method != "tools/call":
            return
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            with self._lock:
                self._dropped += 1
                self.unrecorded += 1

    # -- the writer thread ------------------------------------------------------------------
    def _run(self) -> None:
        stopping = False
        while not stopping:
            taken = [self._queue.get()]
            while len(taken) < self._batch:
                try:
                    taken.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            records = [r for r in taken if isinstance(r, CallRecord)]
            stopping = len(records) < len(taken)
            try:
                self._write(records)
            finally:
                for _ in taken:
                    self._queue.task_done()

    def _write(self, records: list[CallRecord]) -> None:
        with self._lock:
            dropped, self._dropped = self._dropped, 0
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
