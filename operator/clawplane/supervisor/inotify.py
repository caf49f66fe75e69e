"""An event-driven recursive folder watch on Linux's inotify (``_utils.changefeed``, no thread).

watchfiles' watcher wakes every ``step`` milliseconds to look for changes, which trades
idle CPU against the latency of every save. This one sleeps in the event loop until the
kernel reports a change on the inotify descriptor, then gathers the burst until it has
been quiet for ``QUIET_S`` (at most ``MAX_BATCH_S``), so an idle folder costs no wakeups
and a save is seen within milliseconds.
"""

from __future__ import annotations

import errno
import os
from collections.abc import AsyncIterator, Callable

import anyio

from clawplane._utils.changefeed import (
    IN_CREATE,
    IN_IGNORED,
    IN_ISDIR,
    IN_MOVED_TO,
    IN_Q_OVERFLOW,
    ChangeFeed,
    inotify_available,
    open_feed,
)

QUIET_S = 0.02
"""A burst of events ends once none has arrived for this long (editors write in several steps)."""
MAX_BATCH_S = 0.2
"""A steady stream of changes is still reported this often."""

Keep = Callable[[str], bool]


def available() -> bool:
    """Whether this platform has inotify (otherwise the caller polls with watchfiles)."""
    return inotify_available()


class InotifyError(OSError):
    """inotify could not be set up (e.g. the per-user watch limit is reached)."""


class _Watches:
    def __init__(self, keep: Keep, feed: ChangeFeed | None) -> None:
        self.keep = keep
        self.owned = feed is None
        found = open_feed() if feed is None else feed
        if found is None:
            raise InotifyError(errno.EMFILE, "inotify_init1 failed")
        self.feed = found
        self.wake = found.subscribe()
        self.dirs: dict[int, str] = {}

    def add_tree(self, root: str) -> None:
        """Watch ``root`` and every directory under it that is kept."""
        for here, subdirs, _ in os.walk(root):
            try:
                wd = self.feed.add(here).wd
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR):  # gone again already
                    continue
                raise InotifyError(exc.errno, f"inotify_add_watch {here}: {exc.strerror}") from None
            self.dirs[wd] = here
            subdirs[:] = [d for d in subdirs if self.keep(os.path.join(here, d))]

    def read(self) -> set[str]:
        """The paths named by the pending events (new directories are watched as they appear)."""
        changed: set[str] = set()
        for wd, mask, raw in self.feed.events():
            if mask & IN_Q_OVERFLOW:  # events were lost: everything may have changed
                changed.add(next(iter(self.dirs.values()), ""))
                continue
            base = self.dirs.get(wd)
            if mask & IN_IGNORED:
                self.dirs.pop(wd, None)
                continue
            if base is None:
                continue  # a watch the engine's caches placed (a file, say), not the tree's
            path = os.path.join(base, os.fsdecode(raw)) if raw else base
            if not self.keep(path):
                continue
            changed.add(path)
            if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                self.add_tree(path)
        return changed

    async def readable(self) -> None:
        """Until events are queued, or a drain (a plan) took some off the queue for us."""
        async with anyio.create_task_group() as tg:

            async def wait(fd: int) -> None:
                await anyio.wait_readable(fd)
                tg.cancel_scope.cancel()

            tg.start_soon(wait, self.feed.fd)
            tg.start_soon(wait, self.wake)

    def close(self) -> None:
        if self.owned:
            self.feed.close()
        else:
            self.feed.unsubscribe()


async def watch_tree(root: str, keep: Keep, feed: ChangeFeed | None = None) -> AsyncIterator[set[str]]:
    """Yield the changed paths under ``root``, one set per quiet-ended burst, forever.

    With ``feed`` (a watching engine's), the tree is watched on that inotify instance, so the
    supervisor holds one descriptor for both.
    """
    watches = _Watches(keep, feed)
    try:
        watches.add_tree(root)
        while True:
            await watches.readable()
            batch = watches.read()
            with anyio.move_on_after(MAX_BATCH_S):
                while True:
                    with anyio.move_on_after(QUIET_S) as quiet:
                        await watches.readable()
                    if quiet.cancelled_caught:
                        break
                    batch |= watches.read()
            if batch:
                yield batch
    finally:
        watches.close()
