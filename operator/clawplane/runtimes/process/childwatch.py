"""A supervisor of a thousand children: no thread per child, and descriptors for all of them.

On Python 3.11 asyncio's default child watcher (``ThreadedChildWatcher``) starts one thread
per child process, blocked in ``waitpid`` for as long as the child lives: a supervisor of
1,000 stdio servers holds 1,000 threads. ``watch_children_with_pidfds`` replaces it, for the
running loop, with ``PidfdChildWatcher``: each child's exit arrives as a readable pidfd on
the event loop, so the thread count no longer depends on the number of servers. Python
3.12 and later do this by themselves. Only processes with one event loop (the supervisor
daemon, the bridge) install it: the watcher is process-wide and bound to one loop.

Every stdio server costs descriptors (its three pipes and a pidfd), and the default soft
limit of 1,024 caps a folder at a few hundred servers; ``raise_descriptor_limit`` lifts the
soft limit to the hard one, which an unprivileged process may do.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import sys

__all__ = ["DESCRIPTORS_PER_SERVER", "raise_descriptor_limit", "watch_children_with_pidfds"]

DESCRIPTORS_PER_SERVER = 5
"""Descriptors a hosted stdio server costs the supervisor: stdin, stdout, stderr and two pidfds
(its exit, watched by the runtime, and the reaping by asyncio's watcher)."""


def _pidfds_work() -> bool:
    if not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:  # an old kernel or a sandbox that forbids pidfd_open
        return False
    return True


def watch_children_with_pidfds() -> bool:
    """Watch child exits through pidfds on the running loop; False where not possible or needed."""
    if sys.version_info >= (3, 12) or sys.platform != "linux" or not _pidfds_work():
        return False
    loop = asyncio.get_running_loop()
    watcher = asyncio.PidfdChildWatcher()
    watcher.attach_loop(loop)
    asyncio.set_child_watcher(watcher)
    return True


def raise_descriptor_limit() -> tuple[int, int]:
    """Lift the soft ``RLIMIT_NOFILE`` to the hard limit; returns the (soft, hard) now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        # Refused (a kernel cap below "unlimited"): keep the soft limit; status reports what holds.
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)
