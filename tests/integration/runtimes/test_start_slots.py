"""Starts of stdio servers are bounded: a fleet starts a few at a time, and every one gets there."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest
from tests.fixtures.servers.helpers import START_TIMEOUT, settings

from clawplane.models import McpServerSpec
from clawplane.runtimes import Phase, Supervisor
from clawplane.runtimes.process.starts import MIN_SLOTS, StartSlots, default_start_slots

pytestmark = pytest.mark.anyio

MINIMAL = Path(__file__).resolve().parents[2] / "fixtures" / "servers" / "minimal_server.py"


class CountingSlots(StartSlots):
    """Start slots that remember the most ever held at once."""

    def __init__(self, slots: int) -> None:
        super().__init__(slots)
        self.held = self.most = self.given = 0

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Callable[[], None]]:
        async with super().slot() as release:
            self.held += 1
            self.given += 1
            self.most = max(self.most, self.held)
            counted = True

            def counting_release() -> None:
                nonlocal counted
                if counted:
                    counted = False
                    self.held -= 1
                release()

            try:
                yield counting_release
            finally:
                counting_release()


async def test_a_fleet_starts_at_most_the_slots_at_once_and_all_become_ready(tmp_path: Path) -> None:
    async with Supervisor(settings=settings(max_starting=2)) as supervisor:
        assert supervisor.starts.total == 2
        counting = supervisor.starts = CountingSlots(2)
        names = [f"tiny-{i}" for i in range(8)]
        for name in names:
            spec = McpServerSpec(command=sys.executable, args=["-S", str(MINIMAL), name],
                                 connection_timeout_ms=int(START_TIMEOUT * 1000))  # fmt: skip
            await supervisor.ensure(name, spec, config_hash="h", base_dir=tmp_path)
        with anyio.fail_after(START_TIMEOUT * 2):
            settled = [await supervisor.wait_settled(name, timeout=START_TIMEOUT) for name in names]
    assert [s.phase for s in settled] == [Phase.READY] * len(names)
    assert counting.given == len(names) and counting.most == 2 and counting.held == 0


def test_the_default_is_several_starts_per_core() -> None:
    assert default_start_slots() >= MIN_SLOTS
    assert Supervisor().starts.total == default_start_slots()
