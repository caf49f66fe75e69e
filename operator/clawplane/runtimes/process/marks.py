"""The mark in every spawned process's environment, and proof that a process is one of ours.

A supervisor killed with ``-9`` leaves its servers and their helpers behind, re-parented to
init: no tree, process group or session leads from the next supervisor to them any more. So
every process clawplane spawns gets ``CLAWPLANE_MARK=<a random value of this supervisor>`` in
its environment, which its descendants inherit (unless one clears its environment). The next
supervisor of the folder reads the dead one's mark from the state database (0600) and finds
everything it left by that mark, however it detached.

The mark is no password: it only narrows the search. A process is *proven ours* when its pid,
start time and boot match (``_utils.identity``; no reused pid passes), its real user is the one
the supervisor ran as, and its environment carries the mark. A process whose environment
cannot be read (another user's, a set-user-ID program) or was rewritten is never proven.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Collection
from dataclasses import dataclass

from clawplane._utils.identity import ProcessIdentity, boot_id

__all__ = ["MARK_ENV", "Owned", "mark_of", "marked_processes", "own_mark", "owner_of", "proven"]

MARK_ENV = "CLAWPLANE_MARK"
"""The environment variable that carries the spawning supervisor's mark."""

_ENVIRON_LIMIT = 1 << 20
"""Bytes of ``/proc/PID/environ`` read at most: a mark beyond them is not seen (never proven)."""
_PREFIX = MARK_ENV.encode() + b"="
_mark: str | None = None


def _forget_mark() -> None:
    global _mark
    _mark = None


os.register_at_fork(after_in_child=_forget_mark)


def own_mark() -> str:
    """This process's mark (random, made on first use; a forked child makes its own)."""
    global _mark
    if _mark is None:
        _mark = secrets.token_hex(16)
    return _mark


def mark_of(pid: int) -> str | None:
    """The mark in ``pid``'s environment: "" when it has none, None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            raw = fh.read(_ENVIRON_LIMIT)
    except OSError:
        return None
    for item in raw.split(b"\0"):
        if item.startswith(_PREFIX):
            return item[len(_PREFIX) :].decode("ascii", "replace")
    return ""


def owner_of(pid: int) -> int | None:
    """The real user id of ``pid``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _stat(pid: int) -> tuple[int, str] | None:
    """Start time (ticks since boot) and state letter of ``pid``, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[-1].split()
        return int(fields[19]), fields[0].decode()
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True, slots=True)
class Owned:
    """Who a dead supervisor was: the mark its processes carry, its user, and when it started."""

    mark: str
    uid: int
    since: int = 0
    """Start time (ticks since boot) of that supervisor: nothing it started is older."""


def proven(identity: ProcessIdentity, owners: Collection[Owned]) -> bool:
    """True when ``identity`` is that very live process, run by and marked by one of ``owners``."""
    state = _stat(identity.pid)
    if identity.boot != boot_id() or state is None or state[0] != identity.start or state[1] in ("Z", "X"):
        return False
    uid, mark = owner_of(identity.pid), mark_of(identity.pid)
    return any(o.mark and mark == o.mark and uid == o.uid for o in owners)


def marked_processes(owners: Collection[Owned]) -> list[ProcessIdentity]:
    """Every live process that carries the mark of one of ``owners`` and is run by its user.

    A scan of the process table: only processes of a mark's user that started after its
    supervisor have their environment read.
    """
    wanted = [o for o in owners if o.mark]
    if not wanted:
        return []
    uids = {o.uid for o in wanted}
    oldest = min(o.since for o in wanted)
    me = os.getpid()
    found: list[ProcessIdentity] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            pid = int(entry.name)
            state = _stat(pid)
            if state is None or state[0] < oldest or state[1] in ("Z", "X") or owner_of(pid) not in uids:
                continue
            ident = ProcessIdentity(pid, state[0], boot_id())
            mark, uid = mark_of(pid), owner_of(pid)
            if any(mark == o.mark and uid == o.uid and state[0] >= o.since for o in wanted):
                found.append(ident)
    return found
