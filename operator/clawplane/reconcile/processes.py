"""The supervisor's own processes, written down and, after a crash, ended: only those, all of them.

``StateLedger`` is the runtimes' ``ProcessLedger`` for a folder: every process a runtime
spawns is in the ``processes`` table from the moment it exists (identity, process group,
cgroup, descendants seen), and the runtime's row follows its newest pid in every supervisor
mode. ``end_leftovers`` ends what a dead supervisor left: per recorded process, in parallel,
SIGTERM to everything still verifiably it (its cgroup; its group while the recorded leader
lives; recorded descendants whose identity still matches), a grace period, then SIGKILL.
A row whose pid now belongs to someone else (reuse, reboot) is dropped without a signal.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import anyio
import psutil

from clawplane._utils.identity import ProcessIdentity, alive, boot_id, identify, send_signal
from clawplane.runtimes import cgroups, reaping
from clawplane.runtimes.process import OwnedProcess, live_processes
from clawplane.state import ProcessRecord, StateDB, store, utcnow

log = logging.getLogger("clawplane.reconcile")

GRACE_S = 3.0
KILL_WAIT_S = 3.0
_POLL_S = 0.05


def _record(process: OwnedProcess) -> ProcessRecord:
    ident = process.identity
    return ProcessRecord(
        pid=ident.pid,
        start_ticks=ident.start,
        boot_id=ident.boot,
        label=process.label,
        pgid=process.pgid,
        cgroup=process.cgroup,
        descendants=tuple((d.pid, d.start, d.boot) for d in process.descendants),
        supervisor_pid=os.getpid(),
    )


class StateLedger:
    """Records spawned processes in the folder's state database (see the module docstring)."""

    def __init__(self, db: StateDB, *, on_error: Callable[[str], None] | None = None) -> None:
        self.db = db
        self.on_error = on_error
        self._failed: set[int] = set()

    def record(self, process: OwnedProcess) -> None:
        """Write ``process`` down (called the moment it exists)."""
        self._safely(lambda: store.put_process(self.db, _record(process)), process)

    def forget(self, process: OwnedProcess) -> None:
        """Drop ``process`` once its whole tree is gone."""
        self._safely(lambda: store.delete_process(self.db, _record(process)), process)

    def record_all(self) -> None:
        """Record every live process again (a replaced database, or writes that failed)."""
        self._failed.clear()
        for process in live_processes():
            self.record(process)

    def retry(self) -> None:
        """Write what failed to be written before, if anything did."""
        if self._failed:
            self.record_all()

    def _safely(self, write: Callable[[], None], process: OwnedProcess) -> None:
        try:
            self.retry()
            write()
        except Exception as exc:  # the disk may be full: the server keeps running, the fault is reported
            self._failed.add(process.identity.pid)
            message = f"cannot record process {process.identity.pid} of {process.label}: {exc}"
            log.error("%s", message)
            if self.on_error is not None:
                self.on_error(message)


def _targets(rec: ProcessRecord) -> tuple[list[ProcessIdentity], Path | None]:
    """What of ``rec`` is still verifiably running: identities, and its cgroup if it has one."""
    found: dict[int, ProcessIdentity] = {}
    group = Path(rec.cgroup) if rec.cgroup and cgroups.is_ours(Path(rec.cgroup)) else None
    if group is not None:
        for pid in cgroups.members(group):
            if (ident := identify(pid)) is not None:
                found[pid] = ident  # in a cgroup a clawplane supervisor made for this process
    leader = ProcessIdentity(rec.pid, rec.start_ticks, rec.boot_id)
    if alive(leader):
        found[leader.pid] = leader
        for proc in reaping.group_members(rec.pgid):
            if (ident := identify(proc.pid)) is not None and alive(leader):
                found[proc.pid] = ident  # the verified leader reserves the group id
    for pid, start, boot in rec.descendants:
        ident = ProcessIdentity(pid, start, boot)
        if alive(ident):
            found[pid] = ident
    return list(found.values()), group


async def _wait_gone(targets: list[ProcessIdentity], group: Path | None, seconds: float) -> bool:
    # Polls: these are another (dead) supervisor's processes, and pidfds of non-children only
    # report exit, not reaping; a 50 ms poll over a few processes costs nothing.
    with anyio.move_on_after(seconds):
        while any(alive(t) for t in targets) or (group is not None and cgroups.members(group)):
            await anyio.sleep(_POLL_S)
        return True
    return False


async def _end(rec: ProcessRecord, grace: float, ended: list[str]) -> None:
    if rec.boot_id != boot_id():
        return  # recorded before a reboot: nothing of it runs, and its pids are strangers'
    targets, group = _targets(rec)
    if not targets and group is None:
        return
    if targets:
        ended.append(rec.label)
    for sig in (signal.SIGTERM, signal.SIGCONT):
        for target in targets:
            send_signal(target, sig)
    if not await _wait_gone(targets, group, grace):
        for target in targets:
            send_signal(target, signal.SIGKILL)
        if group is not None:
            cgroups.kill(group)
        if not await _wait_gone(targets, group, KILL_WAIT_S):
            log.warning("leftover processes of %s did not exit after SIGKILL", rec.label)
    if group is not None:
        cgroups.remove(group)


CGROUP_ROOT_KEY = "supervisor_cgroup"


def claim_cgroup_root(db: StateDB) -> Path | None:
    """Record this supervisor's cgroup folder; returns the previous supervisor's, if another.

    Written before the first spawn, so even a child forked an instant before a kill -9 (and
    so never recorded itself) is found after a crash: it is in that folder.
    """
    previous = store.get_meta(db, CGROUP_ROOT_KEY) or ""
    tree = cgroups.available()
    current = str(tree.root) if tree is not None else ""
    store.set_meta(db, CGROUP_ROOT_KEY, current)
    return Path(previous) if previous and previous != current else None


async def end_leftovers(
    db: StateDB, *, grace: float = GRACE_S, previous_root: Path | None = None
) -> list[str]:
    """End every recorded process of a dead supervisor, all at once; returns the labels ended.

    ``previous_root`` is the dead supervisor's cgroup folder: whatever runs in it is ended too.
    Call only while holding the folder's supervisor lock (no live supervisor owns them).
    """
    records = store.load_processes(db)
    recorded = {r.cgroup for r in records if r.cgroup}
    unrecorded = [
        ProcessRecord(0, -1, boot_id(), child.name.rsplit(".", 1)[0], 0, str(child))
        for child in _subfolders(previous_root)
        if str(child) not in recorded
    ]
    ended: list[str] = []
    async with anyio.create_task_group() as tg:
        for rec in [*records, *unrecorded]:
            tg.start_soon(_end, rec, grace, ended)
    for rec in records:
        store.delete_process(db, rec)
    if previous_root is not None:
        with contextlib.suppress(OSError):
            previous_root.rmdir()
    mark_runtimes_stopped(db)
    return sorted(set(ended))


def cleanup_stale_runtimes(db: StateDB) -> list[str]:
    """End what a dead supervisor left (see ``end_leftovers``); mark every runtime stopped.

    Call only while holding the supervisor lock: its recorded cgroup folder is then a dead one's.
    """
    root = store.get_meta(db, CGROUP_ROOT_KEY)
    ended = anyio.run(partial(end_leftovers, db, previous_root=Path(root) if root else None))
    store.set_meta(db, CGROUP_ROOT_KEY, "")
    return ended


def _subfolders(root: Path | None) -> list[Path]:
    if root is None or not root.name.startswith("clawplane."):
        return []
    try:
        return [p for p in root.iterdir() if p.is_dir() and cgroups.is_ours(p)]
    except OSError:
        return []


def mark_runtimes_stopped(db: StateDB) -> None:
    """Record every runtime as stopped (no supervisor runs them)."""
    for rt in store.load_observed(db).runtimes.values():
        if rt.phase != "stopped" or rt.pid is not None:
            store.put_runtime(db, replace(rt, phase="stopped", pid=None, pgid=None, updated_at=utcnow()))


def end_adopted_orphans(spawned: set[int]) -> int:
    """SIGKILL the descendants this supervisor adopted and no server claimed (at shutdown)."""
    count = 0
    for orphan in reaping.adopted_orphans(spawned):
        with contextlib.suppress(psutil.Error):
            for proc in (*orphan.children(recursive=True), orphan):
                proc.kill()  # psutil verifies the start time before signalling
                count += 1
    return count
