"""Child processes are watched without a thread each, and the descriptor limit is lifted."""

from __future__ import annotations

import asyncio
import resource
import sys
import threading
from collections.abc import Iterator

import anyio
import pytest

from clawplane.runtimes.process.childwatch import raise_descriptor_limit, watch_children_with_pidfds

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pidfds are Linux's")


async def threads_while_running(children: int) -> int:
    """Threads of this process while ``children`` processes run, after every one has exited too."""
    processes = [await anyio.open_process([sys.executable, "-c", "import sys; sys.stdin.read()"])
                 for _ in range(children)]
    during = threading.active_count()
    for process in processes:
        assert process.stdin is not None
        await process.stdin.aclose()
    for process in processes:
        assert await process.wait() == 0
        await process.aclose()
    return during


@pytest.fixture
def own_child_watcher() -> Iterator[None]:
    """The watcher is process-wide: put the previous one back for the tests that follow."""
    if sys.version_info >= (3, 12):
        yield
        return
    previous = asyncio.get_child_watcher()
    try:
        yield
    finally:
        asyncio.set_child_watcher(previous)


@pytest.mark.usefixtures("own_child_watcher")
def test_thread_count_does_not_grow_with_children() -> None:
    async def main() -> tuple[bool, int, int]:
        installed = watch_children_with_pidfds()
        return installed, await threads_while_running(2), await threads_while_running(12)

    installed, few, many = anyio.run(main)
    if sys.version_info < (3, 12):
        assert installed  # on 3.11 the default watcher would start a thread per child
    assert few == many


def test_soft_descriptor_limit_is_raised_to_the_hard_one() -> None:
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        if before[1] != resource.RLIM_INFINITY:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, before[1]), before[1]))
        soft, hard = raise_descriptor_limit()
        assert hard == before[1]
        assert soft == hard or hard == resource.RLIM_INFINITY
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)
