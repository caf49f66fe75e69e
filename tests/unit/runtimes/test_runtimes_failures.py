"""Pausing after repeated failures, recycling after repeated timeouts, and restart backoff."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from clawplane.runtimes import RuntimeSettings, ServerPausedError
from clawplane.runtimes.failures import FailureTracker, Verdict


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def tracker(clock: Clock, threshold: int = 3) -> FailureTracker:
    return FailureTracker("srv", threshold=threshold, pause_seconds=60, clock=clock)


def test_third_consecutive_failure_pauses_for_sixty_seconds() -> None:
    clock = Clock()
    failures = tracker(clock)
    assert [failures.record_failure(timed_out=False) for _ in range(3)] == [
        Verdict.COUNTED,
        Verdict.COUNTED,
        Verdict.PAUSED,
    ]
    with pytest.raises(ServerPausedError) as paused:
        failures.check()
    assert paused.value.retry_at == datetime.fromtimestamp(clock.now + 60, UTC)
    assert str(paused.value) == (
        'MCP server "srv" is paused after repeated tool failures; retry after 2027-01-15T08:01:00.000Z'
    )


def test_pause_ends_by_itself_and_one_more_failure_pauses_again() -> None:
    clock = Clock()
    failures = tracker(clock)
    for _ in range(3):
        failures.record_failure(timed_out=False)
    clock.now += 60
    failures.check()
    assert failures.paused_until is None
    assert failures.record_failure(timed_out=False) is Verdict.PAUSED


def test_success_resets_the_streak_and_the_pause() -> None:
    clock = Clock()
    failures = tracker(clock)
    failures.record_failure(timed_out=False)
    failures.record_failure(timed_out=False)
    failures.record_success()
    assert failures.record_failure(timed_out=False) is Verdict.COUNTED
    for _ in range(2):
        failures.record_failure(timed_out=False)
    failures.record_success()
    failures.check()


def test_a_third_failure_that_timed_out_recycles_instead_of_pausing() -> None:
    failures = tracker(Clock())
    failures.record_failure(timed_out=True)
    failures.record_failure(timed_out=False)
    assert failures.record_failure(timed_out=True) is Verdict.RECYCLE
    assert failures.failures == 0 and failures.paused_until is None


def test_restart_backoff_doubles_from_one_second_to_thirty() -> None:
    settings = RuntimeSettings()
    assert [settings.restart_delay(n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 30, 30, 30]
    assert settings.restart_delay(10_000) == 30


def test_defaults_are_openclaws_constants() -> None:
    s = RuntimeSettings()
    assert (s.failure_threshold, s.pause_seconds, s.catalog_list_timeout, s.catalog_retry_seconds) == (
        3,
        60,
        1.5,
        5,
    )
    assert (s.max_list_pages, s.max_list_items, s.max_list_bytes) == (128, 16384, 10485760)
    assert (s.stderr_line_bytes, s.stdin_close_grace, s.terminate_grace) == (8192, 2, 2)
