"""Teardown notices a server's exit within a millisecond or two, not at the next 10 ms step.

Most stdio servers exit a few milliseconds after their stdin closes; with a fixed 10 ms poll
every restart waited for the step (on the converge bench, a quarter of clawplane's overhead
over a bare restart). The first polls are 1 ms apart, later ones 10 ms (a hung server still
costs few wakeups). Counted, not timed.
"""

from __future__ import annotations

import itertools

import anyio
import pytest

from clawplane.runtimes.process import child as process

pytestmark = pytest.mark.anyio


async def _steps(checks_until_done: int, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    steps: list[float] = []
    real_sleep = anyio.sleep

    async def recorded(seconds: float) -> None:
        steps.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(process.anyio, "sleep", recorded)
    counter = itertools.count(1)
    # _wait does not use its instance: the polling alone is under test.
    await process.ServerProcess._wait(None, lambda: next(counter) > checks_until_done, 60.0)  # type: ignore[arg-type]
    monkeypatch.undo()
    return steps


async def test_an_exit_within_the_first_polls_is_seen_a_millisecond_later(monkeypatch: pytest.MonkeyPatch) -> None:
    assert await _steps(3, monkeypatch) == [0.001] * 3


async def test_a_slow_exit_is_polled_every_10_ms_after_the_fine_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    steps = await _steps(40, monkeypatch)
    assert steps == [0.001] * 16 + [0.01] * 24


async def test_an_exit_already_seen_costs_no_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    assert await _steps(0, monkeypatch) == []
