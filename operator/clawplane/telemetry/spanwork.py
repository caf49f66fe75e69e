"""Span building off the event loop: a worker thread that makes a finished call's spans.

The OpenTelemetry SDK spends tens of microseconds on each span it starts (attribute checks, the
sampler, ids); made as the call happens, that is work on the proxy's event loop for every call
(the bench measured a tenth added to the median call). A finished call's spans are made here
instead, with the times they happened: the proxy only queues what to make. The worker wakes at
most every ``LINGER_S`` and takes what queued meanwhile, so it does not take the interpreter from
the proxy call by call, and offers the interpreter lock back after each call's spans, so a burst
never keeps a woken proxy waiting. A full queue drops the call's spans (counted and logged, never
waited for).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

__all__ = ["LINGER_S", "QUEUE_SIZE", "SpanWork"]

logger = logging.getLogger(__name__)

QUEUE_SIZE = 4096
LINGER_S = 0.1
_LOG_EVERY_S = 60.0


class SpanWork:
    """A queue of span-making work and the thread that does it (started on first use)."""

    def __init__(self, *, queue_size: int = QUEUE_SIZE, linger: float = LINGER_S) -> None:
        self._queue: queue.Queue[Callable[[], None]] = queue.Queue(maxsize=queue_size)
        self._linger = linger
        self._hurry = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._after: list[Callable[[], None]] = []
        self.dropped = 0
        """Calls whose spans were not made because the queue was full."""
        self._logged = 0.0

    def put(self, work: Callable[[], None]) -> None:
        """Queue ``work``; drop it (and count it) when the queue is full."""
        try:
            self._queue.put_nowait(work)
        except queue.Full:
            self._drop()
            return
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="clawplane-spans", daemon=True)
                    self._thread.start()

    def after_batch(self, then: Callable[[], None]) -> None:
        """Run ``then`` once the batch being worked on is done (on the worker, before ``drain`` returns)."""
        self._after.append(then)

    def drain(self) -> None:
        """Make every span queued so far (the worker skips its linger meanwhile)."""
        if self._thread is None:
            return
        self._hurry.set()
        try:
            self._queue.join()
        finally:
            self._hurry.clear()

    def _drop(self) -> None:
        self.dropped += 1
        now = time.monotonic()
        if now - self._logged >= _LOG_EVERY_S:
            self._logged = now
            logger.warning("traces: %d call(s) got no spans: the span queue was full", self.dropped)

    def _run(self) -> None:
        while True:
            taken = [self._queue.get()]
            if self._linger > 0:
                self._hurry.wait(self._linger)  # more calls join; drain() ends the wait
            while True:
                try:
                    taken.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            for work in taken:
                try:
                    work()
                except Exception:  # one call's spans must not stop the others'
                    logger.exception("making a call's spans failed")
                # Offer the interpreter lock: a proxy thread woken meanwhile takes it now, not
                # after the switch interval (5 ms) a burst of span-making would otherwise hold it.
                time.sleep(0)
            after, self._after = self._after, []
            for then in after:
                try:
                    then()
                except Exception:
                    logger.exception("exporting the spans of calls failed")
            for _ in taken:
                self._queue.task_done()
