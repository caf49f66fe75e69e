"""One accounting of an endpoint's client sessions: limits, each consumer's share, idleness, eviction.

Every endpoint that holds sessions — a hosted server's front (the supervisor's ``/mcp/<server>``
and ``clawplane bridge``), the per-agent endpoint ``/mcp/agents/<agent>`` and the control plane
``/mcp/_clawplane`` — admits each new session here, for the consumer whose token opens it:

- a consumer holds at most its *share* of the endpoint (``maxSessionsPerConsumer``, by default
  three quarters of ``maxSessions``), so no consumer can take every slot: at its share, its own
  least-recently-used idle session is ended to make room, else the new one is refused;
- the endpoint holds at most ``maxSessions``: when full, the least-recently-used idle session of
  any consumer is ended to make room, else the new one is refused;
- a session is *idle* while none of its requests is in flight and none of its streams is open
  (a session's opening request counts as in flight until it is answered);
- a session's last *use* is when its last request other than ``ping`` ended, so a client that
  only pings an abandoned session neither keeps it nor moves it back in the eviction order;
- an idle session is ended ``idle_ttl`` seconds after its last use;
- when every session that would have to make room is busy, the new one is refused: the endpoint
  answers HTTP 503 with ``Retry-After: RETRY_AFTER_S`` (busy sessions free up as their requests
  end, so a client soon finds room); ``evictions`` counts the sessions ended to make room.

A client whose session was ended gets 404 on its next request and initializes a new one, as the
MCP specification has it. A refusal names who holds the slots and the setting to raise.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import anyio
import anyio.abc

__all__ = [
    "DEFAULT_IDLE_TTL_S",
    "DEFAULT_MAX_SESSIONS",
    "RETRY_AFTER_S",
    "Seat",
    "SessionLedger",
    "SessionLimitError",
    "SessionLimits",
    "default_share",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_SESSIONS = 32
DEFAULT_IDLE_TTL_S = 600.0
RETRY_AFTER_S = 1
"""Seconds a refused client is told to wait (``Retry-After``): a busy session frees its slot as soon
as its request ends, so a second later there is usually room."""


def default_share(max_sessions: int) -> int:
    """A consumer's share when none is declared: three quarters of ``max_sessions``, rounded up."""
    return max_sessions - max_sessions // 4


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """The limits of one endpoint's sessions."""

    max_sessions: int = DEFAULT_MAX_SESSIONS
    per_consumer: int | None = None
    """Sessions one consumer may hold (None: ``default_share``)."""
    idle_ttl: float | None = DEFAULT_IDLE_TTL_S
    """Seconds an idle session lives after its last use (None: until it ends otherwise)."""

    @property
    def share(self) -> int:
        """Sessions one consumer may hold."""
        if self.per_consumer is None:
            return default_share(self.max_sessions)
        return max(1, min(self.per_consumer, self.max_sessions))


class SessionLimitError(Exception):
    """No slot for a new session; ``str()`` says whose sessions fill it and what to raise."""


class Seat:
    """One session's place in its endpoint's ledger."""

    def __init__(self, ledger: SessionLedger, consumer: str, end: Callable[[str], None]) -> None:
        self.consumer = consumer
        self.key: str | None = None
        """The session's id, once the endpoint has handed one out (for logs and lookups)."""
        self.last_used = anyio.current_time()
        self.in_flight = 1  # the opening request, until ``opened``
        self.ended = False
        self._ledger = ledger
        self._end = end

    @property
    def idle(self) -> bool:
        """No request in flight and no stream open."""
        return not self.in_flight and not self.ended

    @contextlib.contextmanager
    def busy(self) -> Iterator[Callable[[], None]]:
        """Hold the session in use while an HTTP request of it is served.

        Yields a function to call once the request turns out to be a use (anything but a
        ``ping``): the session's last use is then when the request ended.
        """
        used = False

        def use() -> None:
            nonlocal used
            used = True
            self.last_used = anyio.current_time()

        self.in_flight += 1
        try:
            yield use
        finally:
            self.in_flight -= 1
            if used:
                self.last_used = anyio.current_time()
            self._ledger._settled(self)

    def opened(self) -> None:
        """The opening request has been answered (or failed): the session may go idle from now on."""
        if self.in_flight:
            self.in_flight -= 1
        self.last_used = anyio.current_time()
        self._ledger._changed()

    def release(self) -> None:
        """The session has ended by itself: give its slot back."""
        self._ledger._drop(self)

    def end(self, reason: str) -> None:
        """End the session (it frees its slot at once)."""
        if self.ended:
            return
        self._ledger._drop(self)
        self._end(reason)


class SessionLedger:
    """The sessions of one endpoint (see the module docstring).

    ``where`` names the endpoint in messages (``MCP server "notes"``); ``total_setting`` and
    ``share_setting`` name where its limits are declared (``spec.maxSessions``, ``--max-sessions``).
    ``task_group`` runs the task that ends idle sessions, while there are any.
    """

    def __init__(
        self,
        where: str,
        limits: Callable[[], SessionLimits],
        task_group: anyio.abc.TaskGroup,
        *,
        total_setting: str,
        share_setting: str,
        on_evict: Callable[[], None] | None = None,
        on_refuse: Callable[[], None] | None = None,
        on_count: Callable[[int], None] | None = None,
    ) -> None:
        self.where = where
        self.evictions = 0
        """Sessions ended to make room for a new one, since the endpoint started."""
        self._on_evict = on_evict
        self._on_refuse = on_refuse
        """Told of each session refused at the limit (metrics)."""
        self._on_count = on_count
        """Told how many sessions the endpoint holds whenever that changes (metrics)."""
        self._limits = limits
        self._tg = task_group
        self._total_setting = total_setting
        self._share_setting = share_setting
        self._seats: list[Seat] = []
        self._wake = anyio.Event()
        self._reaping = False
        self._due = math.inf
        """When the reaper wakes next by itself (its soonest idle deadline)."""
        self._ttl: float | None = None
        """The idle TTL the reaper last computed ``_due`` with."""

    @property
    def limits(self) -> SessionLimits:
        """The endpoint's limits now."""
        return self._limits()

    def __len__(self) -> int:
        return len(self._seats)

    def held_by(self, consumer: str) -> int:
        """How many sessions ``consumer`` holds."""
        return sum(1 for seat in self._seats if seat.consumer == consumer)

    def admit(self, consumer: str, end: Callable[[str], None]) -> Seat:
        """A slot for a new session of ``consumer``, ending idle sessions to make room if needed.

        ``end(reason)`` ends the session when the ledger evicts it or it stays idle too long.
        The seat starts in use (its opening request): call ``Seat.opened`` once that is answered.

        Raises:
            SessionLimitError: ``consumer`` is at its share, or the endpoint is full, and none of
                the sessions that would have to make room is idle.
        """
        try:
            seat = self._admit(consumer, end)
        except SessionLimitError:
            if self._on_refuse is not None:
                self._on_refuse()
            raise
        if self._on_count is not None:
            self._on_count(len(self._seats))
        return seat

    def _admit(self, consumer: str, end: Callable[[str], None]) -> Seat:
        limits = self._limits()
        share = limits.share
        if share < limits.max_sessions:
            while self.held_by(consumer) >= share:
                if not self._evict([s for s in self._seats if s.consumer == consumer], consumer):
                    raise SessionLimitError(
                        f'consumer "{consumer}" already holds {self.held_by(consumer)} of the client '
                        f"sessions of {self.where} (its share; the endpoint allows {limits.max_sessions}), "
                        f"and none of them is idle; end one (HTTP DELETE) or raise {self._share_setting}"
                    )
        while len(self._seats) >= limits.max_sessions:
            if not self._evict(self._seats, consumer):
                raise SessionLimitError(
                    f"{self.where} already has {len(self._seats)} client sessions (its maxSessions), and "
                    f"none of them is idle; end one (HTTP DELETE) or raise {self._total_setting}"
                )
        seat = Seat(self, consumer, end)
        self._seats.append(seat)
        self._changed()
        return seat

    def _evict(self, candidates: list[Seat], newcomer: str) -> bool:
        """End the least-recently-used idle session among ``candidates``; False when none is idle."""
        idle = [seat for seat in candidates if seat.idle]
        if not idle:
            return False
        victim = min(idle, key=lambda seat: seat.last_used)
        logger.info(
            "%s: ending the least recently used idle session %s of %s to make room for %s",
            self.where, (victim.key or "")[:8], victim.consumer, newcomer,
        )  # fmt: skip
        victim.end(f"ended to make room for a new session ({self.where} was at its limit)")
        self.evictions += 1
        if self._on_evict is not None:
            self._on_evict()
        return True

    def _drop(self, seat: Seat) -> None:
        seat.ended = True
        if seat in self._seats:
            self._seats.remove(seat)
            if self._on_count is not None:
                self._on_count(len(self._seats))

    def _changed(self) -> None:
        self._wake.set()
        if self._seats and not self._reaping:
            try:
                self._tg.start_soon(self._reap)
            except RuntimeError:  # the endpoint is shutting down: its sessions end with it
                return
            self._reaping = True

    def _settled(self, seat: Seat) -> None:
        """A request of ``seat`` ended: wake the reaper only if that changes its next deadline.

        A seat that stays busy, or goes idle later than the reaper's next deadline (under the same
        TTL), changes nothing it would do; waking it on every request was a per-call cost.
        """
        ttl = self._ttl
        unchanged = self._reaping and self._limits().idle_ttl == ttl
        if unchanged and (ttl is None or not seat.idle or seat.last_used + ttl >= self._due):
            return
        self._changed()

    async def _reap(self) -> None:
        """End sessions idle past the TTL; runs while the ledger holds any."""
        try:
            while self._seats:
                self._wake = anyio.Event()
                wake = self._wake
                ttl = self._limits().idle_ttl
                now = anyio.current_time()
                soonest = math.inf
                for seat in list(self._seats):
                    if ttl is None or not seat.idle:
                        continue
                    due = seat.last_used + ttl
                    if due <= now:
                        logger.info(
                            "%s: session %s of %s closed after %g s idle",
                            self.where, (seat.key or "")[:8], seat.consumer, ttl,
                        )  # fmt: skip
                        seat.end(f"idle for {ttl:g} s")
                    else:
                        soonest = min(soonest, due)
                self._due, self._ttl = soonest, ttl
                with anyio.move_on_after(soonest - now):
                    await wake.wait()
        finally:
            self._reaping = False
            self._due = math.inf
