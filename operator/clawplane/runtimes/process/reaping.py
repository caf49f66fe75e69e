"""Finding and collecting a server's descendants: group scans, the subreaper bit, zombie reaping.

A descendant that outlives its parent is reparented to the nearest *subreaper*, or to PID 1.
The supervisor marks its own process as a subreaper (Linux ``PR_SET_CHILD_SUBREAPER``) before
the first server starts, so a killed grandchild becomes clawplane's child and clawplane reaps
it at once instead of leaving a zombie until init gets round to it. Only descendants the
supervisor itself tracked are reaped here; asyncio still reaps the servers it spawned.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import time

import psutil

from clawplane.runtimes.process.marks import mark_of, own_mark

__all__ = [
    "adopted_orphans",
    "become_subreaper",
    "children",
    "exists",
    "group_members",
    "reap",
    "reap_orphans",
    "running",
    "tree_of",
]

_PR_SET_CHILD_SUBREAPER = 36
_subreaper: bool | None = None


def become_subreaper() -> bool:
    """Make orphaned descendants reparent to this process (Linux only; done once); True on success."""
    global _subreaper
    if _subreaper is None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            _subreaper = False
    return _subreaper


def _proc_children_file() -> bool:
    """True when the kernel lists each task's children (``/proc/PID/task/TID/children``)."""
    global _children_file
    if _children_file is None:
        me = os.getpid()
        _children_file = os.path.exists(f"/proc/{me}/task/{me}/children")
    return _children_file


_children_file: bool | None = None


def _child_pids(pid: int) -> list[int] | None:
    """The children of ``pid`` from its tasks' ``children`` files; None when they cannot be read.

    psutil finds children by reading every process's ``stat`` (the whole process table): for a
    supervisor asking about each of a thousand servers, that is a million reads. These files
    cost one read per thread of ``pid``.
    """
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return []  # gone
    except OSError:
        return None
    found: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                found.extend(int(part) for part in fh.read().split())
        except FileNotFoundError:
            continue  # the thread ended meanwhile
        except (OSError, ValueError):
            return None
    return found


def children(pid: int | None = None) -> list[psutil.Process]:
    """The live children of ``pid`` (default: this process); empty once it is gone."""
    pid = os.getpid() if pid is None else pid
    pids = _child_pids(pid) if _proc_children_file() else None
    if pids is None:
        with contextlib.suppress(psutil.Error):
            return list(psutil.Process(pid).children())
        return []
    found = []
    for child in pids:
        with contextlib.suppress(psutil.Error):
            found.append(psutil.Process(child))
    return found


def tree_of(pid: int) -> list[psutil.Process]:
    """The descendants of ``pid`` (recursively); empty once it is gone."""
    found: list[psutil.Process] = []
    seen = {pid}
    todo = [pid]
    while todo:
        for child in children(todo.pop()):
            if child.pid not in seen:  # a reused pid cannot make this loop
                seen.add(child.pid)
                found.append(child)
                todo.append(child.pid)
    return found


GROUP_SCAN_TTL_S = 0.25
"""How old a scan of the process table may be to answer ``group_members`` for a live group."""
_groups: tuple[float, dict[int, list[psutil.Process]]] | None = None


def group_members(pgid: int) -> list[psutil.Process]:
    """Every process in process group ``pgid`` (a scan of the process table).

    There is no per-group listing, so this reads every process. A thousand servers torn down
    together would each scan it, quadratic in the servers; one scan at most ``GROUP_SCAN_TTL_S``
    old answers for every group it found, and a group it did not find is scanned for afresh.
    """
    global _groups
    now = time.monotonic()
    if _groups is None or now - _groups[0] > GROUP_SCAN_TTL_S or pgid not in _groups[1]:
        table: dict[int, list[psutil.Process]] = {}
        for proc in psutil.process_iter():
            with contextlib.suppress(psutil.Error, OSError):
                table.setdefault(os.getpgid(proc.pid), []).append(proc)
        _groups = (time.monotonic(), table)
    return [proc for proc in _groups[1].get(pgid, ()) if exists(proc)]


def exists(proc: psutil.Process) -> bool:
    """True while ``proc`` (that very process, not a reused pid) exists, zombie or not."""
    try:
        return bool(proc.is_running())
    except psutil.Error:
        return False


def running(proc: psutil.Process) -> bool:
    """True while ``proc`` exists and is not a zombie."""
    try:
        return bool(proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def reap(procs: list[psutil.Process]) -> None:
    """Collect those of ``procs`` that are this process's exited children (adopted orphans)."""
    me = os.getpid()
    for proc in procs:
        with contextlib.suppress(psutil.Error, ChildProcessError, OSError):
            if proc.ppid() == me and proc.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(proc.pid, os.WNOHANG)


def adopted_orphans(spawned: set[int]) -> list[psutil.Process]:
    """This process's live children that a server of its own left behind: descendants it adopted.

    Being our child in a session of its own is not proof: the process may also have started
    session leaders itself that are not servers (a test's etcd, say), and those must never be
    torn down with a server. An orphan counts only when it carries this process's mark, which
    every spawned server passes on to its descendants (``marks``).
    """
    if not _subreaper:
        return []
    mine = own_mark()
    return [
        child
        for child in children()
        if child.pid not in spawned and running(child) and _orphaned(child) and mark_of(child.pid) == mine
    ]


def _orphaned(proc: psutil.Process) -> bool:
    # A child this process started itself without a session of its own (git, a helper) shares
    # our session; servers get their own session but are listed in ``spawned``.
    try:
        return bool(os.getsid(proc.pid) != os.getsid(0))
    except OSError:
        return False


def reap_orphans(keep: set[int]) -> list[int]:
    """Reap every exited child except ``keep`` (for PID 1, which adopts all orphans); returns pids."""
    reaped: list[int] = []
    for child in children():
        if child.pid in keep:
            continue
        with contextlib.suppress(psutil.Error, ChildProcessError, OSError):
            if child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)
                reaped.append(child.pid)
    return reaped
