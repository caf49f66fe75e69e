"""Folder watching for ``clawplane run`` (the only module that imports ``watchfiles``).

``watch_folder`` calls ``on_change`` once per debounced batch of file changes under the
resource folder; the state directory and the output directory are ignored, so the
supervisor's own writes never wake it up. A folder that is (or sits under) a symlink
swapped to each new revision, as git-sync does, is followed: when the link points somewhere
new, the watch moves to the new target and ``on_change`` is told at once.

On Linux the watch is event-driven (``inotify``): nothing wakes while the folder is idle
and a save is reported once its burst of writes has been quiet for 20 ms. Elsewhere, or
when inotify cannot be set up, watchfiles polls every ``STEP_MS``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
from watchfiles import Change, DefaultFilter, awatch

from clawplane._utils.changefeed import ChangeFeed
from clawplane.supervisor import inotify

DEBOUNCE_MS = 200
STEP_MS = 50
LINK_CHECK_S = 1.0
"""How often the folder's symlink target is re-read (a readlink; there is no event for it)."""

log = logging.getLogger("clawplane.reconcile")


def _target(folder: Path) -> str:
    return os.path.realpath(folder)


async def watch_folder(
    folder: Path,
    on_change: Callable[[set[str]], None],
    *,
    ignore: Sequence[Path] = (),
    stop: anyio.Event,
    debounce_ms: int = DEBOUNCE_MS,
    feed: ChangeFeed | None = None,
) -> None:
    """Report changed paths under ``folder`` until ``stop`` is set.

    ``feed``: a watching engine's change feed, whose inotify instance the watch then shares.
    """
    watch_filter = DefaultFilter(ignore_paths=[str(p) for p in ignore])
    while not stop.is_set():
        target = _target(folder)
        moved = anyio.Event()
        async with anyio.create_task_group() as tg:

            async def follow_link(target: str = target, moved: anyio.Event = moved) -> None:
                while _target(folder) == target:
                    await anyio.sleep(LINK_CHECK_S)
                moved.set()

            async def relay_stop(moved: anyio.Event = moved) -> None:
                await stop.wait()
                moved.set()

            tg.start_soon(follow_link)
            tg.start_soon(relay_stop)
            if os.path.isdir(target):
                tg.start_soon(_watch, target, on_change, watch_filter, moved, debounce_ms, feed)
            await moved.wait()
            tg.cancel_scope.cancel()
        if not stop.is_set():
            log.info("the folder %s now points at %s; watching there", folder, _target(folder))
            on_change({str(folder)})


async def _watch(
    target: str,
    on_change: Callable[[set[str]], None],
    watch_filter: DefaultFilter,
    moved: anyio.Event,
    debounce_ms: int,
    feed: ChangeFeed | None,
) -> None:
    if inotify.available():
        try:
            async for paths in inotify.watch_tree(target, lambda p: watch_filter(Change.modified, p), feed):
                on_change(paths)
        except inotify.InotifyError as exc:
            log.warning("cannot watch %s with inotify (%s); polling instead", target, exc)
        else:
            return
    async for changes in awatch(
        target,
        watch_filter=watch_filter,
        stop_event=moved,
        debounce=debounce_ms,
        step=STEP_MS,
        yield_on_timeout=False,
    ):
        if changes:
            on_change({path for _, path in changes})
