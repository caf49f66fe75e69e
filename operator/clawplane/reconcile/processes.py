"""Process-group clean-up for runtimes a dead supervisor left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import time

from clawplane.reconcile.supervisorfile import pid_alive

GRACE_S = 3.0


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid_alive(pgid) or _any_member(pgid)


def _any_member(pgid: int) -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                    fields = fh.read().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def terminate_group(pgid: int, *, grace: float = GRACE_S) -> bool:
    """SIGTERM then SIGKILL a whole process group; True if anything was still running."""
    if pgid <= 1 or pgid == os.getpgid(0) or not _group_alive(pgid):
        return False
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _group_alive(pgid):
        time.sleep(0.05)  # polling a foreign process group: there is no event to wait on
    if _group_alive(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    return True
