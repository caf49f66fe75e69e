"""A change feed over directories (Linux inotify), so a long-running engine can trust what did not move.

A re-plan of an unchanged tree used to cost one ``stat`` per folder and per skill file.
With a feed, a consumer that read a directory in pass ``s`` (after the watch existed)
may reuse what it read while the directory's watch saw no event after that pass.

Passes are numbered by ``drain``: events read by the drain that starts pass ``p`` are
stamped ``p`` and happened before anything pass ``p`` reads; an event stamped later
happened after (or during) the read. A watch added in pass ``p`` is stamped ``p + 1``,
so whatever was read before it existed is checked by ``stat`` once more before it is
trusted. The kernel queues an event before the modifying call returns, so a drain that
reads until the queue is empty sees every change made before it started.

What inotify cannot see is left to ``stat``: content behind symbolic links (watches
refuse a symlink itself, so a chain of watched folders has none) and network or FUSE
file systems (only local ones are watched). A folder's watch reports its entries and
what is done to them through that folder; a change made through another link of a file
reaches only the file's own watch, so consumers watch the files they trust. A queue
overflow marks everything changed. What remains (say, a mount over a watched folder's
child) is bounded in time: every ``refresh_s`` seconds a drain marks everything
changed, so each consumer confirms by ``stat`` again.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import stat as stat_mod
import struct
import sys
import time
import weakref
from dataclasses import dataclass

__all__ = ["ChangeFeed", "Watch", "default_budget", "open_feed"]

# <sys/inotify.h>
_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC

_NAMES = _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF
_MASK = _NAMES | _IN_MODIFY | _IN_ATTRIB | _IN_DONT_FOLLOW
_EVENT = struct.Struct("iIII")
# A share of the user's watches, so editors and other watchers (ours too) keep theirs.
_BUDGET_SHARE = 4
_BUDGET_CAP = 65_536
_LIMIT_FILE = "/proc/sys/fs/inotify/max_user_watches"
_DEFAULT_REFRESH_S = 30.0
# statfs f_type of local file systems, whose every change passes through this kernel.
_LOCAL_FS = frozenset({
    0xEF53,  # ext2/3/4
    0x58465342,  # xfs
    0x9123683E,  # btrfs
    0x01021994,  # tmpfs
    0x858458F6,  # ramfs
    0x794C7630,  # overlayfs
    0xF2F52010,  # f2fs
    0x2FC12FC1,  # zfs
    0xCA451A4E,  # bcachefs
    0x3153464A,  # jfs
    0x52654973,  # reiserfs
})


@dataclass(slots=True, eq=False)
class Watch:
    """One watched folder or file: the passes of its last events."""

    wd: int
    names: int
    """Last pass that saw its entries created, removed or renamed, or the folder itself change."""
    any: int
    """Last pass that saw any event: also a child's content or attributes."""
    alive: bool = True

    def names_clean(self, since: int) -> bool:
        """No entry appeared, vanished or moved after pass ``since``."""
        return self.alive and self.names <= since


class ChangeFeed:
    """An inotify instance with one watch per watched inode; ``drain`` starts a pass."""

    def __init__(self, fd: int, libc: _Libc, budget: int, refresh_s: float) -> None:
        self._fd = fd
        self._libc = libc
        self._budget = budget
        self._refresh_s = refresh_s
        self._refreshed = time.monotonic()
        self.seq = 0
        """The current pass (see the module docstring)."""
        self._by_wd: dict[int, Watch] = {}
        self._finalizer = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        """Release the inotify instance; every watch stops being trusted."""
        for watch in self._by_wd.values():
            watch.alive = False
        self._by_wd.clear()
        self._finalizer()

    @property
    def closed(self) -> bool:
        """True once ``close`` ran."""
        return not self._finalizer.alive

    def drain(self) -> int:
        """Start a pass: stamp every queued event with it; returns the new pass number."""
        self.seq += 1
        if self.closed:
            return self.seq
        now = time.monotonic()
        if now - self._refreshed >= self._refresh_s:
            self._refreshed = now
            self._lost()
        while True:
            try:
                data = os.read(self._fd, 65_536)
            except BlockingIOError:
                break
            except OSError:
                self._lost()
                break
            if not data:
                break
            self._stamp(data)
        return self.seq

    def _stamp(self, data: bytes) -> None:
        seq, by_wd, unpack = self.seq, self._by_wd, _EVENT.unpack_from
        offset, end = 0, len(data)
        while offset < end:
            wd, mask, _cookie, size = unpack(data, offset)
            offset += _EVENT.size + size
            if mask & _IN_Q_OVERFLOW:
                self._lost()
                continue
            watch = by_wd.get(wd)
            if watch is None:
                continue
            watch.any = seq
            if mask & _NAMES or (size == 0 and mask & _IN_ATTRIB):
                watch.names = seq
            if mask & _IN_IGNORED:  # removed by the kernel: the folder is gone or unmounted
                self._forget(watch)

    def _forget(self, watch: Watch) -> None:
        watch.alive = False
        del self._by_wd[watch.wd]

    def _lost(self) -> None:
        """Events were dropped: nothing read before this pass may be trusted."""
        for watch in self._by_wd.values():
            watch.names = watch.any = self.seq

    def watch(self, path: str, *, folder: bool = True) -> Watch | None:
        """Watch the folder (or, with ``folder=False``, the file) ``path``, never a symlink itself.

        ``None`` when it cannot be watched: missing, the wrong type, not on a local file
        system, or the budget is spent. A file's own watch sees its content change
        through any of its links. Asked again, it returns the watch on whatever is at
        ``path`` now (the kernel knows inodes, not names: a folder moved away keeps its watch).
        """
        if self.closed:
            return None
        encoded = os.fsencode(path)
        try:
            wd = self._libc.add_watch(self._fd, encoded, _MASK | _IN_ONLYDIR if folder else _MASK)
        except (OSError, ValueError):
            return None
        # The same inode reached by another path shares its watch and its history.
        watch = self._by_wd.get(wd)
        if watch is not None:
            return watch
        if not self._admissible(encoded, folder):
            self._libc.rm_watch(self._fd, wd)
            return None
        watch = self._by_wd[wd] = Watch(wd, self.seq + 1, self.seq + 1)
        return watch

    def _admissible(self, path: bytes, folder: bool) -> bool:
        """Within budget, on a local file system, and (a file) not a symlink."""
        if len(self._by_wd) >= self._budget:
            return False
        try:
            # Changes made by another machine never reach this kernel's inotify.
            if self._libc.fs_type(path) not in _LOCAL_FS:
                return False
            # IN_ONLYDIR refuses a symlink to a folder; a file's link would be watched itself.
            return folder or stat_mod.S_ISREG(os.lstat(path).st_mode)
        except OSError:
            return False

    def __len__(self) -> int:
        return len(self._by_wd)


class _Libc:
    """The inotify and statfs calls, raising ``OSError`` as the os module does."""

    def __init__(self, libc: ctypes.CDLL) -> None:
        self._init = libc.inotify_init1
        self._init.argtypes = [ctypes.c_int]
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._rm = libc.inotify_rm_watch
        self._rm.argtypes = [ctypes.c_int, ctypes.c_int]
        self._statfs = libc.statfs
        self._statfs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
        for call in (self._init, self._add, self._rm, self._statfs):
            call.restype = ctypes.c_int
        # struct statfs is at most 120 bytes on 64-bit Linux; f_type is its first word.
        self._buffer = (ctypes.c_long * 32)()

    @staticmethod
    def _checked(result: int) -> int:
        if result < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        return result

    def init(self) -> int:
        """A non-blocking, close-on-exec inotify descriptor."""
        return self._checked(int(self._init(_IN_NONBLOCK | _IN_CLOEXEC)))

    def add_watch(self, fd: int, path: bytes, mask: int) -> int:
        """The watch descriptor for ``path``."""
        if b"\0" in path:
            raise ValueError("embedded NUL in path")
        return self._checked(int(self._add(fd, path, mask)))

    def rm_watch(self, fd: int, wd: int) -> None:
        """Drop a watch (its IN_IGNORED event is then skipped as unknown)."""
        self._rm(fd, wd)

    def fs_type(self, path: bytes) -> int:
        """``statfs(path).f_type``."""
        self._checked(int(self._statfs(path, ctypes.byref(self._buffer))))
        return int(self._buffer[0]) & 0xFFFFFFFF


def default_budget() -> int:
    """How many watches one feed may hold: a quarter of the user's limit, at most 65,536."""
    try:
        with open(_LIMIT_FILE, encoding="ascii") as limit:
            return max(0, min(_BUDGET_CAP, int(limit.read().strip()) // _BUDGET_SHARE))
    except (OSError, ValueError):
        return 0


def open_feed(budget: int | None = None, refresh_s: float = _DEFAULT_REFRESH_S) -> ChangeFeed | None:
    """A new feed, or ``None`` where inotify is unavailable (other systems, instance limit)."""
    if not sys.platform.startswith("linux"):
        return None
    if budget is None:
        budget = default_budget()
    try:
        libc = _Libc(ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True))
        fd = libc.init()
    except (OSError, AttributeError):
        return None
    return ChangeFeed(fd, libc, budget, refresh_s)
