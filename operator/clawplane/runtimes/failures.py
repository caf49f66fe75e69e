"""Consecutive request failures of one server session, and the pause they lead to.

OpenClaw's rule (``recordServerToolFailure``/``runGuardedServerRequest``): the third failed
request in a row pauses the server for 60 s; calls made while it is paused fail at once,
naming the time to retry; any success resets the count. When the third failure is a local
request timeout, OpenClaw recycles the session instead of pausing it (a wedged server is
better restarted than waited for), and so does clawplane. A new session starts clean.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from datetime import UTC, datetime

from clawplane.runtimes.errors import ServerPausedError

__all__ = ["FailureTracker", "Verdict"]


class Verdict(enum.StrEnum):
    """What a recorded failure means for the server."""

    COUNTED = "counted"
    PAUSED = "paused"
    RECYCLE = "recycle"


class FailureTracker:
    """Counts consecutive failed requests and decides when to pause or recycle."""

    def __init__(
        self, server: str, *, threshold: int, pause_seconds: float, clock: Callable[[], float] = time.time
    ):
        self.server = server
        self.failures = 0
        self._threshold = threshold
        self._pause = pause_seconds
        self._clock = clock
        self._paused_until: float | None = None

    @property
    def paused_until(self) -> datetime | None:
        """When the current pause ends, or None if the server is not paused."""
        if self._paused_until is None or self._clock() >= self._paused_until:
            return None
        return datetime.fromtimestamp(self._paused_until, UTC)

    def check(self) -> None:
        """Refuse a call while paused.

        Raises:
            ServerPausedError: The server is paused; the message names the retry time.
        """
        until = self.paused_until
        if until is not None:
            raise ServerPausedError(self.server, until)

    def record_success(self) -> None:
        """A request succeeded: the streak is over."""
        self.failures = 0
        self._paused_until = None

    def record_failure(self, *, timed_out: bool) -> Verdict:
        """A request failed; says whether the server is now paused or must be recycled."""
        self.failures += 1
        if self.failures < self._threshold:
            return Verdict.COUNTED
        if timed_out:
            self.reset()
            return Verdict.RECYCLE
        self._paused_until = self._clock() + self._pause
        return Verdict.PAUSED

    def reset(self) -> None:
        """Forget failures and any pause (a new session)."""
        self.failures = 0
        self._paused_until = None
