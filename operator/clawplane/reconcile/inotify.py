"""An event-driven recursive folder watch on Linux's inotify (through libc, no thread).

watchfiles' watcher wakes every ``step`` milliseconds to look for changes, which trades
idle CPU against the latency of every save. This one sleeps in the event loop until the
kernel reports a change on the inotify descriptor, then gathers the burst until it has
been quiet for ``QUIET_S`` (at most ``MAX_BATCH_S``), so an idle folder costs no wakeups
and a save is seen within milliseconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
from collections.abc import AsyncIterator, Callable

import anyio

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ONLYDIR, IN_ISDIR = 0x4000, 0x8000, 0x01000000, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
)  # fmt: skip
QUIET_S = 0.02
"""A burst of events ends once none has arrived for this long (editors write in several steps)."""
MAX_BATCH_S = 0.2
"""A steady stream of changes is still reported this often."""
_HEADER = struct.Struct("iIII")

Keep = Callable[[str], bool]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 - both must exist
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


def available() -> bool:
    """Whether this platform has inotify (otherwise the caller polls with watchfiles)."""
    return _LIBC is not None


class InotifyError(OSError):
    """inotify could not be set up (e.g. the per-user watch limit is reached)."""


class _Watches:
    def __init__(self, keep: Keep) -> None:
        assert _LIBC is not None
        self.keep = keep
        self.fd = _LIBC.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise InotifyError(ctypes.get_errno(), "inotify_init1 failed")
        self.dirs: dict[int, str] = {}

    def add_tree(self, root: str) -> None:
        """Watch ``root`` and every directory under it that is kept."""
        assert _LIBC is not None
        for here, subdirs, _ in os.walk(root):
            wd = _LIBC.inotify_add_watch(self.fd, os.fsencode(here), MASK)
            if wd < 0:
                code = ctypes.get_errno()
                if code in (errno.ENOENT, errno.ENOTDIR):  # gone again already
                    continue
                raise InotifyError(code, f"inotify_add_watch {here}: {os.strerror(code)}")
            self.dirs[wd] = here
            subdirs[:] = [d for d in subdirs if self.keep(os.path.join(here, d))]

    def read(self) -> set[str]:
        """The paths named by the pending events (new directories are watched as they appear)."""
        changed: set[str] = set()
        try:
            data = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return changed
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _, size = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size : offset + _HEADER.size + size].rstrip(b"\0")
            offset += _HEADER.size + size
            if mask & IN_Q_OVERFLOW:  # events were lost: everything may have changed
                changed.add(next(iter(self.dirs.values()), ""))
                continue
            base = self.dirs.get(wd)
            if mask & IN_IGNORED:
                self.dirs.pop(wd, None)
                continue
            if base is None:
                continue
            path = os.path.join(base, os.fsdecode(raw)) if raw else base
            if not self.keep(path):
                continue
            changed.add(path)
            if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                self.add_tree(path)
        return changed

    def close(self) -> None:
        os.close(self.fd)


async def watch_tree(root: str, keep: Keep) -> AsyncIterator[set[str]]:
    """Yield the changed paths under ``root``, one set per quiet-ended burst, forever."""
    watches = _Watches(keep)
    try:
        watches.add_tree(root)
        while True:
            await anyio.wait_readable(watches.fd)
            batch = watches.read()
            with anyio.move_on_after(MAX_BATCH_S):
                while True:
                    with anyio.move_on_after(QUIET_S) as quiet:
                        await anyio.wait_readable(watches.fd)
                    if quiet.cancelled_caught:
                        break
                    batch |= watches.read()
            if batch:
                yield batch
    finally:
        watches.close()
