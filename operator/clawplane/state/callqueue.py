"""A ``CallSink`` that never makes the proxy wait: finished ``tools/call`` records go on a bounded
queue, and a writer thread hands what has queued to ``_write`` in batches.

The audit trail has two writers on this: ``CallAuditor`` (the state database's table) and
``AuditLines`` (a JSON line each, for a bridge with no state directory). ``finished`` runs on the
proxy's event loop, so it only queues; when the queue is full the call is counted in
``unrecorded``, not kept, and the proxy goes on. After the first record of a batch the writer
may linger for more (one write per call would take the interpreter from the proxy each time).
"""

from __future__ import annotations

import logging
import queue
import threading

from clawplane.telemetry import Call, CallRecord

__all__ = ["CallQueue"]

log = logging.getLogger(__name__)
_STOP = object()


class CallQueue:
    """The queue, the writer thread and the drop count a queued audit sink shares (see the module)."""

    def __init__(self, *, what: str, queue_size: int, batch: int, linger: float = 0.0) -> None:
        self._what = what
        self._batch = batch
        self._linger = linger
        self._stopping = threading.Event()
        self._queue: queue.Queue[CallRecord | object] = queue.Queue(maxsize=queue_size)
        self._lock = threading.Lock()
        self._dropped = 0
        """Calls not kept and not yet said so (in the log or the database)."""
        self.unrecorded = 0
        """Calls not kept since this process started."""
        self._thread: threading.Thread | None = None

    def _accepts(self) -> bool:
        """Whether calls are kept now (a subclass's switch)."""
        return True

    def _write(self, records: list[CallRecord]) -> None:
        """Keep one batch (on the writer thread); ``_take_dropped`` says how many were not kept."""
        raise NotImplementedError

    def _start_writer(self) -> None:
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name=f"clawplane-{self._what}", daemon=True)
        self._thread.start()

    def _stop_writer(self, timeout: float) -> bool:
        """Write what is queued and stop the writer; False when it did not stop in ``timeout``."""
        thread, self._thread = self._thread, None
        if thread is None or not thread.is_alive():
            return thread is not None
        self._stopping.set()
        try:
            self._queue.put(_STOP, timeout=timeout)  # waits only while full, and the writer drains it
        except queue.Full:
            log.warning(
                "the %s writer did not drain its queue in %.0fs; calls still queued are lost",
                self._what,
                timeout,
            )
            return False
        thread.join(timeout)
        return not thread.is_alive()

    def flush(self) -> None:
        """Wait until every call queued so far is written (or counted as not kept)."""
        if self._thread is not None:
            self._queue.join()

    def _count_dropped(self, n: int) -> None:
        with self._lock:
            self._dropped += n
            self.unrecorded += n

    def _take_dropped(self) -> int:
        with self._lock:
            dropped, self._dropped = self._dropped, 0
        return dropped

    # -- CallSink ---------------------------------------------------------------------------
    def begin(self, call: Call) -> None:
        """Kept when it ends."""

    def forwarded(self, call: Call) -> None:
        """Nothing to keep."""

    def held(self, call: Call) -> None:
        """Kept when it ends, with how long it was held."""

    def released(self, call: Call, verdict: str) -> None:
        """Kept when it ends."""

    def finished(self, call: Call, record: CallRecord) -> None:
        """Queue a finished ``tools/call`` for the writer; count it when the queue is full."""
        if record.method != "tools/call" or not self._accepts():
            return
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            self._count_dropped(1)

    # -- the writer thread ------------------------------------------------------------------
    def _run(self) -> None:
        stopping = False
        while not stopping:
            taken = [self._queue.get()]
            if taken[0] is not _STOP and self._linger > 0:
                self._stopping.wait(self._linger)  # more calls join this batch; a close ends the wait
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
