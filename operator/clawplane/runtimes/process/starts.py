"""How many stdio servers start at once.

A thousand servers started together are a thousand processes competing for a few cores while
each must answer its handshake and its tool listing within budget (1.5 s for the listing, as
OpenClaw): on a loaded machine some miss it, and a correct folder fails to apply. So a start
takes one of a fixed number of slots (several per core) from spawn until the server is ready or
its start failed; later starts wait their turn, first come first served. Each holder is bounded
by its own connect and listing timeouts, so the queue always moves, and whoever waits for a
start to settle counts its timeout from the admission, not from the queue.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable

import anyio

__all__ = ["StartSlots", "default_start_slots"]

SLOTS_PER_CORE = 4
MIN_SLOTS = 8


def default_start_slots() -> int:
    """Concurrent starts when the settings do not say: four per core, at least eight."""
    return max(MIN_SLOTS, SLOTS_PER_CORE * (os.cpu_count() or 1))


class StartSlots:
    """A fixed number of start slots, shared by one supervisor's runtimes."""

    def __init__(self, slots: int) -> None:
        self._limiter = anyio.CapacityLimiter(max(1, slots))

    @property
    def total(self) -> int:
        """How many starts may run at once."""
        return int(self._limiter.total_tokens)

    @property
    def starting(self) -> int:
        """Starts holding a slot right now."""
        return int(self._limiter.borrowed_tokens)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Callable[[], None]]:
        """Hold a slot (waiting for one) until the block ends or the yielded release is called."""
        holder = object()
        await self._limiter.acquire_on_behalf_of(holder)
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self._limiter.release_on_behalf_of(holder)

        try:
            yield release
        finally:
            release()
