"""The last hour of traffic, per server and per agent, minute by minute: what the charts draw.

Kept in memory by the process that carries the traffic (the folder supervisor): a restart starts
the hour again, which the dashboard says. Each minute keeps its count, its failures and up to
``SAMPLES_PER_MINUTE`` durations (a uniform sample beyond that), from which p50 and p95 are read.
"""

from __future__ import annotations

import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from clawplane.telemetry.calls import Call, CallRecord, Outcome

__all__ = ["FAILED", "HANDSHAKES", "MINUTES", "CallSeries", "Minute"]

MINUTES = 60
SAMPLES_PER_MINUTE = 512
MAX_SUBJECTS = 512
"""Servers plus agents tracked at once; the least recently active one is dropped past this."""
FAILED = frozenset({Outcome.ERROR, Outcome.TOOL_ERROR})
"""Outcomes a chart counts as errors (a refused approval or a cancelled call is not the server's)."""
HANDSHAKES = frozenset({"initialize", "server/discover"})
"""How a client meets a server, per era: not work a chart should show."""


@dataclass(frozen=True, slots=True)
class Minute:
    """One minute of one subject's traffic."""

    start: float
    """The minute's first second (seconds since the epoch)."""
    calls: int
    errors: int
    p50: float | None
    p95: float | None


@dataclass(slots=True)
class _Bucket:
    minute: int
    calls: int = 0
    errors: int = 0
    seen: int = 0
    samples: list[float] = field(default_factory=list)

    def add(self, duration: float, failed: bool, rng: random.Random) -> None:
        self.calls += 1
        self.errors += failed
        self.seen += 1
        if len(self.samples) < SAMPLES_PER_MINUTE:
            self.samples.append(duration)
        else:  # reservoir sampling: every call of the minute equally likely to be kept
            slot = rng.randrange(self.seen)
            if slot < SAMPLES_PER_MINUTE:
                self.samples[slot] = duration


def _quantile(ordered: list[float], q: float) -> float | None:
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class CallSeries:
    """A ``CallSink`` keeping the last hour per server and per agent (``kind`` ``server``/``agent``)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._subjects: OrderedDict[tuple[str, str], list[_Bucket]] = OrderedDict()
        self._lock = threading.Lock()
        self._rng = random.Random()
        self.since = clock()
        """When this process started counting (the charts' hour may be shorter)."""

    def begin(self, call: Call) -> None:
        """Counted when it ends."""

    def forwarded(self, call: Call) -> None:
        """Nothing to record."""

    def held(self, call: Call) -> None:
        """Not charted."""

    def released(self, call: Call, verdict: str) -> None:
        """Not charted."""

    def finished(self, call: Call, record: CallRecord) -> None:
        """Add one finished request to its server's minute and, through an agent endpoint, its agent's."""
        if record.method in HANDSHAKES:
            return
        minute = int(record.at // 60)
        failed = record.outcome in FAILED
        with self._lock:
            self._add(("server", record.server), minute, record.duration_s, failed)
            if record.agent is not None:
                self._add(("agent", record.agent), minute, record.duration_s, failed)

    def _add(self, key: tuple[str, str], minute: int, duration: float, failed: bool) -> None:
        buckets = self._subjects.get(key)
        if buckets is None:
            buckets = self._subjects[key] = []
            while len(self._subjects) > MAX_SUBJECTS:
                self._subjects.popitem(last=False)
        self._subjects.move_to_end(key)
        if not buckets or buckets[-1].minute != minute:
            if buckets and buckets[-1].minute > minute:  # a call that began in an earlier minute
                for bucket in reversed(buckets):
                    if bucket.minute == minute:
                        bucket.add(duration, failed, self._rng)
                        return
                return
            buckets.append(_Bucket(minute))
            cutoff = minute - MINUTES
            while buckets and buckets[0].minute <= cutoff:
                buckets.pop(0)
        buckets[-1].add(duration, failed, self._rng)

    def hour(self, kind: str, name: str) -> list[Minute]:
        """The last 60 minutes of ``name`` (a server or an agent), oldest first, empty minutes included."""
        now = int(self._clock() // 60)
        with self._lock:
            found = {b.minute: b for b in self._subjects.get((kind, name), [])}
            snapshot = {m: (b.calls, b.errors, sorted(b.samples)) for m, b in found.items()}
        minutes = []
        for minute in range(now - MINUTES + 1, now + 1):
            calls, errors, ordered = snapshot.get(minute, (0, 0, []))
            minutes.append(
                Minute(minute * 60.0, calls, errors, _quantile(ordered, 0.5), _quantile(ordered, 0.95))
            )
        return minutes

    def names(self, kind: str) -> list[str]:
        """Servers (or agents) that had traffic within the hour, sorted."""
        cutoff = int(self._clock() // 60) - MINUTES
        with self._lock:
            return sorted(
                n for (k, n), b in self._subjects.items() if k == kind and b and b[-1].minute > cutoff
            )
