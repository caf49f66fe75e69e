"""Keep other processes of the same user out of this one's ``/proc`` (``PR_SET_DUMPABLE`` 0).

A process's initial environment stays readable in ``/proc/<pid>/environ`` to every process of
its user for as long as it runs, whatever it later removes from ``os.environ``; so do its memory
and open files. A process holding credentials it was handed in its environment (the bridge's
token, a collector's headers) and running code it does not trust as the same user (the MCP
server it starts) turns that off: a non-dumpable process's ``/proc`` entries belong to root and
need ``CAP_SYS_PTRACE``. Children get their own setting back when they ``exec`` (the kernel makes
an ordinary program dumpable again), so the server is not affected. It also means no core dump
and no same-user debugger (``py-spy``, ``gdb``) for this process.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["forbid_inspection", "inspectable"]

_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4


def _prctl(option: int, arg: int = 0) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return int(prctl(option, arg, 0, 0, 0))


def forbid_inspection() -> str | None:
    """Make this process non-dumpable; None when done, else why not (not Linux, or refused)."""
    if not sys.platform.startswith("linux"):
        return f"{sys.platform} has no PR_SET_DUMPABLE"
    try:
        if _prctl(_PR_SET_DUMPABLE, 0) != 0:
            return f"prctl(PR_SET_DUMPABLE) failed (errno {ctypes.get_errno()})"
    except (OSError, AttributeError) as exc:  # no libc to load, or no prctl in it
        return f"prctl is not available ({exc})"
    return None


def inspectable() -> bool | None:
    """Whether this process is dumpable (None: cannot tell on this platform)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return _prctl(_PR_GET_DUMPABLE) == 1
    except (OSError, AttributeError):
        return None
