"""Knowing a process for sure: pid plus start time plus boot, and signals that cannot hit a stranger.

A pid alone names whoever holds that number now: after the process exits (or the machine
reboots) it may be a stranger's. ``ProcessIdentity`` adds the process's start time (clock
ticks since boot, from ``/proc/PID/stat``) and the kernel's boot id, which together name
one process for ever. ``send_signal`` opens a pidfd first and checks the identity *through*
it, so the process signalled is the one that was checked even if the pid is reused in
between; without pidfds (old kernels) the check and the signal are as close as they can be.
A process group is only signalled while its leader is alive and still the recorded one:
the kernel keeps a group's id reserved while any member lives, but once the leader is gone
a group id proves nothing.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = [
    "ProcessIdentity",
    "alive",
    "boot_id",
    "identify",
    "is_stopped",
    "pgid_of",
    "send_signal",
    "signal_group",
]


@cache
def boot_id() -> str:
    """This boot's id (empty when the kernel does not say)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    return text.rsplit(")", 1)[-1].split()


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    """One process, for ever: pid, start time (ticks since boot) and boot id."""

    pid: int
    start: int
    boot: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"pid": self.pid, "start": self.start, "boot": self.boot}

    @classmethod
    def from_dict(cls, doc: Any) -> ProcessIdentity | None:
        """The identity in ``doc`` (from ``to_dict``), or None when it is not one."""
        try:
            return cls(int(doc["pid"]), int(doc["start"]), str(doc["boot"]))
        except (KeyError, TypeError, ValueError):
            return None

    def matches(self) -> bool:
        """True while this very process exists (zombies included)."""
        now = identify(self.pid)
        return now is not None and now == self


def identify(pid: int) -> ProcessIdentity | None:
    """The identity of the process holding ``pid`` now, or None if there is none."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 20:
        return None
    return ProcessIdentity(pid, int(fields[19]), boot_id())


def alive(identity: ProcessIdentity) -> bool:
    """True while the process exists and is not a zombie."""
    fields = _stat_fields(identity.pid)
    if fields is None or len(fields) < 20:
        return False
    return int(fields[19]) == identity.start and identity.boot == boot_id() and fields[0] not in ("Z", "X")


def is_stopped(pid: int) -> bool:
    """True when ``pid`` is stopped (SIGSTOP, or a tracer)."""
    fields = _stat_fields(pid)
    return fields is not None and bool(fields) and fields[0] in ("T", "t")


def pgid_of(pid: int) -> int | None:
    """The process group of ``pid`` now, or None."""
    fields = _stat_fields(pid)
    return int(fields[2]) if fields is not None and len(fields) > 2 else None


def send_signal(identity: ProcessIdentity, sig: int) -> bool:
    """Signal exactly the process ``identity`` names; False (nothing sent) if it is not there."""
    if identity.pid <= 1 or identity.boot != boot_id():
        return False
    try:
        pidfd = os.pidfd_open(identity.pid)
    except (OSError, AttributeError):
        pidfd = None
    try:
        if not identity.matches():
            return False
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, sig)
        else:
            os.kill(identity.pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


def signal_group(leader: ProcessIdentity, sig: int) -> bool:
    """Signal the group led by ``leader`` while that leader is the recorded process; else nothing.

    The check and ``killpg`` are back to back: the window in which the leader could exit, be
    reaped and have its pid reused as a stranger's group id is a few microseconds wide, where
    a bare recorded pgid is wrong for as long as the stranger lives.
    """
    if leader.pid <= 1 or leader.boot != boot_id() or pgid_of(leader.pid) != leader.pid:
        return False
    if not alive(leader):
        return False
    try:
        os.killpg(leader.pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True
