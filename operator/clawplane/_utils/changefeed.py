"""A change feed over directories (Linux inotify), so a long-running engine can trust what did not move.

A re-plan of an unchanged tree used to cost one ``stat`` per folder and per skill file.
With a feed, a consumer that read a directory in pass ``s`` (after the watch existed)
may reuse what it read while the directory's watch saw no event after that pass.

Passes are numbered by ``drain``: an event is stamped with the pass after the last one
started when it is read (by a drain, or by a folder watcher sharing the feed), so events
read by the drain that starts pass ``p`` are stamped ``p`` and happened before anything
pass ``p`` reads; an event stamped later happened after (or during) the read. A watch
added in pass ``p`` is stamped ``p + 1``, so whatever was read before it existed is
checked by ``stat`` once more before it is trusted. The kernel queues an event before
the modifying call returns, so a drain that reads until the queue is empty sees every
change made before it started.

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

import contextlib
import ctypes
import ctypes.util
import errno
import os
import stat as stat_mod
import struct
import sys
import threading
import time
import weakref
from dataclasses import dataclass

__all__ = ["ChangeFeed", "Event", "Watch", "default_budget", "inotify_available", "open_feed"]

# <sys/inotify.h>
IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
IN_DONT_FOLLOW = 0x02000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

_NAMES = IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
_MASK = _NAMES | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_DONT_FOLLOW
_EVENT = struct.Struct("iIII")
Event = tuple[int, int, bytes]
"""One inotify event: watch descriptor, mask, and the name within a watched folder."""
# A share of the user's watches, so editors and other watchers (ours too) keep theirs.
_BUDGET_SHARE = 4
_BUDGET_CAP = 65_536
_LIMIT_FILE = "/proc/sys/fs/inotify/max_user_watches"
_DEFAULT_REFRESH_S = 30.0
# Why a watch was refused, in words (the errno's own text would mislead: EXDEV is no link).
_REFUSALS = {
    errno.ENOSPC: "the change feed's share of fs.inotify.max_user_watches is spent",
    errno.EXDEV: "not on a local file system: inotify would miss changes made by other machines",
    errno.EINVAL: "not a regular file",
}
# statfs f_type of local file systems, whose every change passes through this kernel.
_LOCAL_FS = frozenset(
    {
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
    }
)


@dataclass(slots=True, eq=False)
class Watch:
    """One watched folder or file: the passes of its last events."""

    wd: int
    names: int
    """Last pass that saw its entries created, removed or renamed, or the folder itself change."""
    any: int
    """Last pass that saw any event: also a child's content or attributes."""
    alive: bool = True
    budgeted: bool = True
    """Counted in the feed's budget (a folder watcher's own watches are not)."""

    def names_clean(self, since: int) -> bool:
        """No entry appeared, vanished or moved after pass ``since``."""
        return self.alive and self.names <= since


class ChangeFeed:
    """An inotify instance with one watch per watched inode; ``drain`` starts a pass.

    One instance can also serve a folder watcher (``subscribe``): every event read, by
    either side, stamps the watches and is kept for the watcher, and a drain that read
    some wakes it through a pipe, so one descriptor serves both and neither loses events.
    """

    def __init__(self, fd: int, libc: _Libc, budget: int, refresh_s: float) -> None:
        self._fd = fd
        self._libc = libc
        self._budget = budget
        self._budgeted = 0
        self._refresh_s = refresh_s
        self._refreshed = time.monotonic()
        self.seq = 0
        """The current pass (see the module docstring)."""
        self._by_wd: dict[int, Watch] = {}
        # Drains run in a plan's worker thread, the watcher in the event loop.
        self._lock = threading.Lock()
        self._pending: list[Event] | None = None
        self._this_pass: dict[tuple[str, bool], Watch] = {}
        self._local_devices: set[int] = set()
        self._wake: tuple[int, int] | None = None
        self._finalizer = weakref.finalize(self, _close_all, [fd])

    @property
    def fd(self) -> int:
        """The inotify descriptor: readable when events are queued."""
        return self._fd

    def close(self) -> None:
        """Release the inotify instance; every watch stops being trusted."""
        with self._lock:
            for watch in self._by_wd.values():
                watch.alive = False
            self._by_wd.clear()
            self._finalizer()

    @property
    def closed(self) -> bool:
        """True once ``close`` ran."""
        return not self._finalizer.alive

    def drain(self) -> int:
        """Start a pass: every event queued so far is stamped with it; returns its number."""
        with self._lock:
            if not self.closed:
                now = time.monotonic()
                if now - self._refreshed >= self._refresh_s:
                    self._refreshed = now
                    self._local_devices.clear()
                    self._lost()
                if self._read() and self._wake is not None:
                    os.write(self._wake[1], b"!")  # the watcher sleeps on the inotify fd: tell it
            self.seq += 1
            self._this_pass = {}
            return self.seq

    def subscribe(self) -> int:
        """Keep every event for ``events``; returns a descriptor that turns readable when a
        drain took events off the queue the caller waits on."""
        with self._lock:
            if self._wake is None:
                self._wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
                self._finalizer.detach()
                self._finalizer = weakref.finalize(self, _close_all, [self._fd, *self._wake])
            if self._pending is None:
                self._pending = []
            return self._wake[0]

    def unsubscribe(self) -> None:
        """Stop keeping events (a watcher that stopped would never take them)."""
        with self._lock:
            self._pending = None

    def events(self) -> list[Event]:
        """``(wd, mask, name)`` of every event since the last call (``subscribe`` first)."""
        with self._lock:
            if self.closed or self._wake is None or self._pending is None:
                return []
            self._read()
            taken, self._pending = self._pending, []
            with contextlib.suppress(BlockingIOError):
                while os.read(self._wake[0], 4096):
                    pass
            return taken

    def _read(self) -> bool:
        """Read every queued event (the lock held); True when there was any."""
        got = False
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
            got = True
            self._stamp(data)
        return got

    def _stamp(self, data: bytes) -> None:
        # Read now, before the next pass starts: whatever it reads comes after these.
        seq, by_wd, unpack, pending = self.seq + 1, self._by_wd, _EVENT.unpack_from, self._pending
        offset, end = 0, len(data)
        while offset < end:
            wd, mask, _cookie, size = unpack(data, offset)
            start, offset = offset + _EVENT.size, offset + _EVENT.size + size
            if pending is not None:  # only a folder watcher needs the names
                pending.append((wd, mask, data[start:offset].rstrip(b"\0")))
            if mask & IN_Q_OVERFLOW:
                self._lost()
                continue
            watch = by_wd.get(wd)
            if watch is None:
                continue
            watch.any = seq
            if mask & _NAMES or (size == 0 and mask & IN_ATTRIB):
                watch.names = seq
            if mask & IN_IGNORED:  # removed by the kernel: the folder is gone or unmounted
                self._forget(watch)

    def _forget(self, watch: Watch) -> None:
        watch.alive = False
        del self._by_wd[watch.wd]
        self._budgeted -= watch.budgeted

    def _lost(self) -> None:
        """Events were dropped: nothing read before the next pass may be trusted."""
        for watch in self._by_wd.values():
            watch.names = watch.any = self.seq + 1

    def watch(self, path: str, *, folder: bool = True, seen: tuple[int, int] | None = None) -> Watch | None:
        """Watch the folder (or, with ``folder=False``, the file) ``path``, never a symlink itself.

        ``None`` when it cannot be watched: missing, the wrong type, not on a local file
        system, or the budget is spent. A file's own watch sees its content change
        through any of its links. Asked again, it returns the watch on whatever is at
        ``path`` now (the kernel knows inodes, not names: a folder moved away keeps its watch),
        or, within one pass, the watch it returned before: had the name moved on since,
        the events of the move would mark that watch changed for the next pass anyway.
        ``seen``: ``(st_mode, st_dev)`` of ``path`` as the caller found it in this pass, which
        spares an ``lstat`` here.
        """
        key = (path, folder)
        known = self._this_pass.get(key)
        if known is not None and known.alive:
            return known
        try:
            found = self.add(path, folder=folder, budgeted=True, seen=seen)
        except (OSError, ValueError):
            return None
        self._this_pass[key] = found
        return found

    def add(
        self, path: str, *, folder: bool = True, budgeted: bool = False, seen: tuple[int, int] | None = None
    ) -> Watch:
        """``watch``, raising ``OSError`` with the cause; a folder watcher's watches are not budgeted."""
        encoded = os.fsencode(path)
        with self._lock:
            if self.closed:
                raise OSError(errno.EBADF, "the change feed is closed")
            wd = self._libc.add_watch(self._fd, encoded, _MASK | IN_ONLYDIR if folder else _MASK)
            # The same inode reached by another path shares its watch and its history.
            watch = self._by_wd.get(wd)
            if watch is not None:
                return watch
            problem = self._inadmissible(encoded, folder, budgeted, seen)
            if problem is not None:
                self._libc.rm_watch(self._fd, wd)
                raise OSError(problem, _REFUSALS.get(problem) or os.strerror(problem), path)
            watch = self._by_wd[wd] = Watch(wd, self.seq + 1, self.seq + 1, budgeted=budgeted)
            self._budgeted += budgeted
            return watch

    def _inadmissible(
        self, path: bytes, folder: bool, budgeted: bool, seen: tuple[int, int] | None
    ) -> int | None:
        """Why a new watch may not stay (an errno), or None."""
        if budgeted and self._budgeted >= self._budget:
            return errno.ENOSPC
        try:
            if seen is None:
                st = os.lstat(path)
                seen = (st.st_mode, st.st_dev)
            mode, device = seen
            # IN_ONLYDIR refuses a symlink to a folder; a file's link would be watched itself.
            if not folder and not stat_mod.S_ISREG(mode):
                return errno.EINVAL
            # Changes made by another machine never reach this kernel's inotify. A device
            # number names one mounted file system: asked once per device (and refresh).
            if device not in self._local_devices:
                if self._libc.fs_type(path) not in _LOCAL_FS:
                    return errno.EXDEV
                self._local_devices.add(device)
        except OSError as exc:
            return exc.errno or errno.EIO
        return None

    def __len__(self) -> int:
        return len(self._by_wd)


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


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

    @staticmethod
    def _checked(result: int) -> int:
        if result < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        return result

    def init(self) -> int:
        """A non-blocking, close-on-exec inotify descriptor."""
        return self._checked(int(self._init(IN_NONBLOCK | IN_CLOEXEC)))

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
        # struct statfs is at most 120 bytes on 64-bit Linux; f_type is its first word.
        buffer = (ctypes.c_long * 32)()
        self._checked(int(self._statfs(path, ctypes.byref(buffer))))
        return int(buffer[0]) & 0xFFFFFFFF


def inotify_available() -> bool:
    """Whether this platform has inotify."""
    return _LIBC is not None


def default_budget() -> int:
    """How many watches one feed may hold: a quarter of the user's limit, at most 65,536."""
    try:
        with open(_LIMIT_FILE, encoding="ascii") as limit:
            return max(0, min(_BUDGET_CAP, int(limit.read().strip()) // _BUDGET_SHARE))
    except (OSError, ValueError):
        return 0


def open_feed(budget: int | None = None, refresh_s: float = _DEFAULT_REFRESH_S) -> ChangeFeed | None:
    """A new feed, or ``None`` where inotify is unavailable (other systems, instance limit)."""
    if _LIBC is None:
        return None
    try:
        fd = _LIBC.init()
    except OSError:
        return None
    return ChangeFeed(fd, _LIBC, default_budget() if budget is None else budget, refresh_s)


def _load_libc() -> _Libc | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return _Libc(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True))
    except (OSError, AttributeError):
        return None


_LIBC = _load_libc()
