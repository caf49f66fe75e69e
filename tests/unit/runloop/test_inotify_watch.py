"""The event-driven folder watch: changes are reported, and an idle folder wakes nothing."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from clawplane._utils.changefeed import open_feed
from clawplane.supervisor import inotify, watch

pytestmark = pytest.mark.skipif(not inotify.available(), reason="inotify is Linux only")


async def _next_batch(root: Path, act: object) -> set[str]:
    stream = inotify.watch_tree(str(root), lambda _p: True)
    got: set[str] = set()

    async def first() -> None:
        got.update(await stream.__anext__())

    async with anyio.create_task_group() as tg:
        tg.start_soon(first)
        await anyio.wait_all_tasks_blocked()
        assert callable(act)
        act()
    await stream.aclose()
    return got


@pytest.mark.anyio
async def test_a_save_and_a_file_in_a_new_directory_are_reported(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("x")
    assert str(tmp_path / "a.yaml") in await _next_batch(
        tmp_path, lambda: (tmp_path / "a.yaml").write_text("y")
    )

    def mkdir_then_write() -> None:
        (tmp_path / "sub").mkdir()

    assert str(tmp_path / "sub") in await _next_batch(tmp_path, mkdir_then_write)


@pytest.mark.anyio
async def test_the_watch_follows_directories_made_after_it_started(tmp_path: Path) -> None:
    stream = inotify.watch_tree(str(tmp_path), lambda _p: True)
    seen: list[set[str]] = []
    done = anyio.Event()

    async def consume() -> None:
        async for batch in stream:
            seen.append(batch)
            if any(p.endswith("b.yaml") for p in batch):
                done.set()
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        await anyio.wait_all_tasks_blocked()
        (tmp_path / "new").mkdir()
        while not seen:  # the directory's own event says it is watched from now on
            await anyio.wait_all_tasks_blocked()
            await anyio.sleep(0)
        (tmp_path / "new" / "b.yaml").write_text("z")
        with anyio.fail_after(30):
            await done.wait()
    assert str(tmp_path / "new" / "b.yaml") in set().union(*seen)


@pytest.mark.anyio
async def test_an_idle_watch_is_not_woken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch reads the descriptor only after the kernel reports it readable: no polling."""
    reads = 0
    real = inotify._Watches.read

    def counting(self: inotify._Watches) -> set[str]:
        nonlocal reads
        reads += 1
        return real(self)

    def no_polling(*_a: object, **_k: object) -> None:
        raise AssertionError("the polling watcher was used")

    monkeypatch.setattr(inotify._Watches, "read", counting)
    monkeypatch.setattr(watch, "awatch", no_polling)
    monkeypatch.setattr(watch, "LINK_CHECK_S", 3600.0)
    stop = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: watch.watch_folder(tmp_path, lambda _p: None, stop=stop))
        for _ in range(50):  # many scheduler rounds with nothing to report
            await anyio.wait_all_tasks_blocked()
            await anyio.sleep(0)
        stop.set()
    assert reads == 0


@pytest.mark.anyio
async def test_a_plan_that_drains_the_shared_feed_first_still_wakes_the_watch(tmp_path: Path) -> None:
    """The supervisor's watch and its engine share one inotify instance; whoever reads, both learn."""
    feed = open_feed()
    assert feed is not None
    stream = inotify.watch_tree(str(tmp_path), lambda _p: True, feed)
    got: set[str] = set()

    async def first() -> None:
        got.update(await stream.__anext__())

    try:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(first)
                await anyio.wait_all_tasks_blocked()
                # No await in between: the drain empties the queue before the watch can look.
                (tmp_path / "a.yaml").write_text("x")
                feed.drain()
        assert str(tmp_path / "a.yaml") in got
    finally:
        await stream.aclose()
        feed.close()
