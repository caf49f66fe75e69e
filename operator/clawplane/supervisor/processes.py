"""The supervisor's own processes, written down and, after a crash, ended: only those, all of them.

``StateLedger`` is the runtimes' ``ProcessLedger`` for a folder: every process a runtime
spawns is in the ``processes`` table from the moment it exists (identity, process group,
cgroup, descendants seen), and the runtime's row follows its newest pid in every supervisor
mode. Each supervisor also records itself as a ``Generation`` before its first spawn: its
identity, the mark it puts into the environment of every process it starts
(``runtimes.process.marks``), its user and its cgroup folder.

``end_leftovers`` ends what dead supervisors left, before the next one answers anyone: every
recorded process, its group and descendants, whatever runs in their cgroups, and every
process carrying a dead supervisor's mark, process trees included; all at once, SIGTERM, a
grace period, then SIGKILL. Nothing is signalled that is not proven theirs: pid, start time
and boot, the real user, and the mark (or membership of a cgroup a supervisor made). A row
whose pid now belongs to someone else (reuse, reboot) is dropped without a signal. A hosted
stdio server cannot be adopted (its pipes died with its supervisor): it is ended, and the
plan starts it again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import psutil

from clawplane._utils.identity import ProcessIdentity, alive, boot_id, identify, send_signal
from clawplane.runtimes.process import (
    Owned,
    OwnedProcess,
    cgroups,
    live_processes,
    marked_processes,
    own_mark,
    owner_of,
    proven,
    reaping,
)
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

    def __init__(
        self,
        db: StateDB,
        *,
        on_error: Callable[[str], None] | None = None,
        generation: Generation | None = None,
    ) -> None:
        self.db = db
        self.on_error = on_error
        self.generation = generation
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
        if self.generation is not None and self.generation not in load_generations(self.db):
            with contextlib.suppress(Exception):  # a record below reports what fails to write
                claim_generation(self.db, self.generation)
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


# -- generations: who the previous supervisors were ---------------------------------------------

GENERATIONS_KEY = "supervisor_generations"
CGROUP_ROOT_KEY = "supervisor_cgroup"
"""The newest supervisor's cgroup folder alone (what supervisors before generations recorded)."""
_KEEP_GENERATIONS = 16


@dataclass(frozen=True, slots=True)
class Generation:
    """One supervisor's run, as the next one needs it: who it was, its mark, its user, its cgroups."""

    pid: int
    start: int
    boot: str
    mark: str
    uid: int
    cgroup_root: str = ""

    @property
    def identity(self) -> ProcessIdentity:
        """The supervisor process itself."""
        return ProcessIdentity(self.pid, self.start, self.boot)

    @property
    def owned(self) -> Owned:
        """What proves a process was started by this supervisor (see ``runtimes.process.marks``)."""
        return Owned(self.mark, self.uid, self.start)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, doc: Any) -> Generation | None:
        """The generation in ``doc``, or None when it is not one."""
        try:
            return cls(
                int(doc["pid"]), int(doc["start"]), str(doc["boot"]), str(doc["mark"]), int(doc["uid"]),
                str(doc.get("cgroup_root") or ""),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def current_generation() -> Generation:
    """This process as a supervisor generation (its cgroup folder made, where cgroups work)."""
    me = identify(os.getpid()) or ProcessIdentity(os.getpid(), 0, boot_id())
    tree = cgroups.available()
    return Generation(me.pid, me.start, me.boot, own_mark(), os.getuid(), str(tree.root) if tree else "")


def load_generations(db: StateDB) -> list[Generation]:
    """The supervisors of this folder whose leftovers may still run, oldest first."""
    try:
        raw = json.loads(store.get_meta(db, GENERATIONS_KEY) or "[]")
    except ValueError:
        raw = []
    found = [g for g in map(Generation.from_dict, raw if isinstance(raw, list) else []) if g is not None]
    legacy = store.get_meta(db, CGROUP_ROOT_KEY) or ""
    if legacy and legacy not in {g.cgroup_root for g in found}:
        found.insert(0, Generation(0, 0, "", "", -1, legacy))  # a supervisor from before marks
    return found


def _save_generations(db: StateDB, generations: Sequence[Generation]) -> None:
    kept = [g for g in generations if g.pid][-_KEEP_GENERATIONS:]
    store.set_meta(db, GENERATIONS_KEY, json.dumps([g.to_dict() for g in kept]))


def claim_generation(db: StateDB, current: Generation | None = None) -> list[Generation]:
    """Record this supervisor (mark, cgroup folder) in the state database; returns the previous ones.

    Written before the first spawn, so even a child forked an instant before a kill -9 (and
    so never recorded itself) is found after a crash: by its mark, or in the cgroup folder.
    """
    current = current or current_generation()
    previous = [g for g in load_generations(db) if g.identity != current.identity]
    _save_generations(db, [*previous, current])
    store.set_meta(db, CGROUP_ROOT_KEY, current.cgroup_root)
    return previous


# -- ending what dead supervisors left -------------------------------------------------------------


@dataclass
class _Sweep:
    """Everything of the dead supervisors that is provably still running, and whose it is."""

    owners: list[Owned]
    legacy: bool
    """No previous supervisor left a mark (it predates marks): identity alone proves a record."""
    roots: list[Path] = field(default_factory=list)
    """The dead supervisors' cgroup folders: only a cgroup in one of them proves its members."""
    found: dict[ProcessIdentity, str] = field(default_factory=dict)
    groups: dict[Path, str] = field(default_factory=dict)

    def ours(self, ident: ProcessIdentity) -> bool:
        """``ident`` is live and proven started by a dead supervisor of this folder."""
        return alive(ident) if self.legacy else proven(ident, self.owners)

    def add(self, ident: ProcessIdentity, label: str) -> None:
        self.found.setdefault(ident, label)

    def add_tree(self, ident: ProcessIdentity, label: str) -> None:
        """``ident`` and its live descendants: a child of a proven process descends from it."""
        self.add(ident, label)
        uid = owner_of(ident.pid)
        for proc in reaping.tree_of(ident.pid):
            child = identify(proc.pid)
            if child is not None and alive(child) and owner_of(child.pid) == uid:
                self.add(child, label)

    def cgroup_of(self, rec: ProcessRecord) -> Path | None:
        """The cgroup of ``rec`` if a dead supervisor of this folder made it."""
        group = Path(rec.cgroup) if rec.cgroup else None
        if group is None or group.parent not in self.roots or not cgroups.is_ours(group):
            return None
        return group

    def collect(self, records: Sequence[ProcessRecord]) -> None:
        """Find (again: processes may have forked meanwhile) what is left to end."""
        for rec in records:
            if rec.boot_id != boot_id():
                continue  # recorded before a reboot: nothing of it runs, and its pids are strangers'
            group = self.cgroup_of(rec)
            if group is not None:
                self.groups.setdefault(group, rec.label)
                for pid in cgroups.members(group):
                    if (ident := identify(pid)) is not None and alive(ident):
                        self.add_tree(ident, rec.label)  # in a cgroup a clawplane supervisor made
            leader = ProcessIdentity(rec.pid, rec.start_ticks, rec.boot_id)
            if self.ours(leader):
                self.add_tree(leader, rec.label)
                for proc in reaping.group_members(rec.pgid):
                    # Only the proven leader's session can hold members of its group.
                    if (ident := identify(proc.pid)) is not None and self.ours(ident) and alive(leader):
                        self.add_tree(ident, rec.label)
            for pid, start, boot in rec.descendants:
                if self.ours(ident := ProcessIdentity(pid, start, boot)):
                    self.add_tree(ident, rec.label)
        for root in self.roots:
            for child in _subfolders(root):
                label = self.groups.setdefault(child, child.name.rsplit(".", 1)[0])
                for pid in cgroups.members(child):
                    if (ident := identify(pid)) is not None and alive(ident):
                        self.add_tree(ident, label)
        for ident in marked_processes(self.owners):
            self.add_tree(ident, self.found.get(ident, ""))

    def left(self, records: Sequence[ProcessRecord]) -> bool:
        """Collect again; True while anything is left (a process may fork while others end)."""
        self.collect(records)
        return bool(self.running() or self.busy_groups())

    def running(self) -> list[ProcessIdentity]:
        return [t for t in self.found if alive(t)]

    def busy_groups(self) -> list[Path]:
        return [g for g in self.groups if cgroups.members(g)]

    def signal(self, sig: signal.Signals) -> None:
        for target in self.running():
            send_signal(target, sig)
            if sig == signal.SIGTERM:
                send_signal(target, signal.SIGCONT)  # a stopped process must run to act on it
        if sig == signal.SIGKILL:
            for group in self.groups:
                cgroups.kill(group)

    async def wait_gone(self, seconds: float) -> bool:
        # Polls: these are another (dead) supervisor's processes, and pidfds of non-children only
        # report exit, not reaping; a 50 ms poll over a few processes costs nothing.
        with anyio.move_on_after(seconds):
            while self.running() or self.busy_groups():
                await anyio.sleep(_POLL_S)
            return True
        return False


_KILL_ROUNDS = 3
"""SIGKILL rounds at most: each catches what forked while the one before was being sent."""


async def _sweep(sweep: _Sweep, records: Sequence[ProcessRecord], grace: float) -> None:
    if not sweep.left(records):
        return
    sweep.signal(signal.SIGTERM)
    if await sweep.wait_gone(grace) and not sweep.left(records):
        return
    for _ in range(_KILL_ROUNDS):
        sweep.signal(signal.SIGKILL)
        if await sweep.wait_gone(KILL_WAIT_S) and not sweep.left(records):
            return


def _live_others(previous: Sequence[Generation]) -> list[Generation]:
    """Previous supervisors that still run (a copied state folder): none of theirs is ours to end."""
    me = identify(os.getpid())
    return [g for g in previous if g.pid and g.identity != me and alive(g.identity)]


async def end_leftovers(
    db: StateDB, *, grace: float = GRACE_S, previous: Sequence[Generation] | None = None
) -> list[str]:
    """End every process dead supervisors of this folder left, all at once; returns the labels ended.

    What is ended: each recorded process, its group and recorded descendants, everything in
    its cgroup or in a dead supervisor's cgroup folder, and every process that carries a dead
    supervisor's mark, with their descendants; only what is proven theirs (see
    ``runtimes.process.marks``). SIGTERM first, then after ``grace`` seconds SIGKILL. ``previous``
    defaults to every supervisor the state database names. Call only while holding the
    folder's supervisor lock (no live supervisor of this folder owns them).
    """
    previous = load_generations(db) if previous is None else list(previous)
    others = _live_others(previous)
    for other in others:
        log.warning(
            "the state database names a supervisor that still runs (pid %d), not this folder's: its "
            "processes are left alone (was the state folder copied?)",
            other.pid,
        )
    dead = [g for g in previous if g not in others]
    foreign = {g.pid for g in others}
    records = []
    for rec in store.load_processes(db):
        if rec.supervisor_pid in foreign:
            store.delete_process(db, rec)  # never ours to end, now or once that supervisor is gone
        else:
            records.append(rec)
    owners = [g.owned for g in dead if g.mark and g.boot == boot_id()]
    roots = [Path(g.cgroup_root) for g in dead if g.cgroup_root]
    sweep = _Sweep(owners, legacy=not any(g.mark for g in dead), roots=roots)
    with anyio.CancelScope(shield=True):  # stopped midway, it would leave what it signalled running
        await _sweep(sweep, records, grace)
    survivors = sweep.running()
    for ident in survivors:
        whose = sweep.found[ident] or "a previous supervisor"
        log.warning("a leftover process (pid %d) of %s did not exit after SIGKILL", ident.pid, whose)
    kept = {sweep.found[i] for i in survivors}
    for rec in records:
        if rec.label not in kept:
            store.delete_process(db, rec)
    for group in sweep.groups:
        cgroups.remove(group)  # only once empty: a survivor keeps its cgroup for the next try
    for root in roots:
        with contextlib.suppress(OSError):
            root.rmdir()
    unrecorded = sum(1 for label in sweep.found.values() if not label)
    if unrecorded:
        log.info("stopped %d unrecorded process(es) that carried a previous supervisor's mark", unrecorded)
    if not survivors:
        _save_generations(db, [g for g in load_generations(db) if g not in previous])
    mark_runtimes_stopped(db)
    return sorted({label for label in sweep.found.values() if label})


def release_generation(db: StateDB, generation: Generation) -> None:
    """Forget ``generation`` after a clean shutdown that left no process behind (no search next time)."""
    if any(r.supervisor_pid == generation.pid for r in store.load_processes(db)):
        return  # a process that did not exit: the next supervisor ends it
    _save_generations(db, [g for g in load_generations(db) if g != generation])


def cleanup_stale_runtimes(db: StateDB) -> list[str]:
    """End what dead supervisors left (see ``end_leftovers``); mark every runtime stopped.

    Call only while holding the supervisor lock: every supervisor the database names is then dead
    (or another folder's).
    """
    ended = anyio.run(end_leftovers, db)
    if not store.load_processes(db):
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
