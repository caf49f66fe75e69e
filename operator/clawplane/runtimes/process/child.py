"""A stdio MCP server's process: recorded before it settles, its tree owned and torn down for sure.

``open_process`` spawns the command with ``start_new_session=True`` (so the server leads a
new process group), with this supervisor's mark in its environment (``marks``: inherited by
its descendants, it finds them after a ``kill -9`` of the supervisor) and, where cgroup v2 is
writable, inside a cgroup of its own (``cgroups``), which holds every descendant however it
detaches. The moment the process exists it is reported to the ``ProcessLedger`` of the
context (``use_ledger``; the folder supervisor records it in the state database), with its
identity (pid, start time, boot: ``identity``), process group and cgroup, so a supervisor
killed at any point leaves nothing it did not write down. Its stderr is read into a
``StderrLog`` for as long as it lives. On exit from the context the tree is torn down within
a bounded time, shielded from cancellation:

1. close stdin and give the server ``stdin_close_grace`` to exit on its own;
2. SIGTERM (then SIGCONT, so a stopped process can act on it) the process group while its
   leader is unreaped, and every known descendant, wait ``terminate_grace``;
3. SIGKILL whatever is left (the whole cgroup) and wait up to ``kill_wait`` for it to go,
   reaping the descendants that were reparented to clawplane (a subreaper, see ``reaping``).

Known descendants are the server's children (recursively) seen when it became ready, on each
liveness check and when teardown starts, members of its process group while the leader is
unreaped (after that the group id proves nothing), and orphans adopted by the supervisor the
moment the server exited (they were its children: only descendants reparent to a subreaper).
Nothing is signalled that is not verified as that very process. Exit is detected with a
pidfd, not ``Process.wait()``, which on asyncio also waits for the pipes to close and so hangs
while a grandchild still holds them.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import signal
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import PIPE
from typing import Protocol

import anyio
import anyio.abc
import psutil

from clawplane._utils.identity import ProcessIdentity, identify, signal_group
from clawplane.runtimes.errors import StartError
from clawplane.runtimes.process import cgroups, reaping
from clawplane.runtimes.process.marks import MARK_ENV, own_mark
from clawplane.runtimes.process.stderr import StderrLog, pump_stderr

__all__ = [
    "OwnedProcess",
    "ProcessLedger",
    "ServerProcess",
    "Teardown",
    "live_processes",
    "open_process",
    "use_ledger",
]

logger = logging.getLogger(__name__)

_POLL_SECONDS = 0.01
_FINE_POLL_SECONDS = 0.001
_FINE_POLLS = 16
_REAP_POLL_SECONDS = 0.005
_FALLBACK_POLL_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class OwnedProcess:
    """What a ledger records about one spawned process (enough to end it after a crash)."""

    label: str
    identity: ProcessIdentity
    pgid: int
    cgroup: str | None = None
    descendants: tuple[ProcessIdentity, ...] = field(default=())


class ProcessLedger(Protocol):
    """Where spawned processes are written down before anything else happens to them."""

    def record(self, process: OwnedProcess) -> None:
        """``process`` exists (or its known descendants changed)."""
        ...

    def forget(self, process: OwnedProcess) -> None:
        """``process`` and everything it left are gone."""
        ...


_LEDGER: contextvars.ContextVar[ProcessLedger | None] = contextvars.ContextVar("process_ledger", default=None)
# Main processes alive in this process, for attributing orphans the subreaper adopts, and how
# many spawns are between fork and registration (their child is not in _LIVE yet).
_LIVE: weakref.WeakValueDictionary[int, ServerProcess] = weakref.WeakValueDictionary()
_spawning = 0


def live_processes() -> list[OwnedProcess]:
    """Every process this process spawned that is still running (to record them again)."""
    return [p.owned for p in list(_LIVE.values()) if p.returncode is None]


@contextlib.contextmanager
def use_ledger(ledger: ProcessLedger | None) -> Iterator[None]:
    """Record every process spawned in this context (tasks started inside inherit it)."""
    token = _LEDGER.set(ledger)
    try:
        yield
    finally:
        _LEDGER.reset(token)


def _tell(action: str, process: OwnedProcess) -> None:
    ledger = _LEDGER.get()
    if ledger is None:
        return
    try:
        ledger.record(process) if action == "record" else ledger.forget(process)
    except Exception:  # a full disk must not stop a server; the failure is the ledger's to report
        logger.exception("could not %s process %s in the ledger", action, process.identity.pid)


@dataclass(frozen=True, slots=True)
class Teardown:
    """Grace periods of a process-tree teardown, in seconds."""

    stdin_close_grace: float = 2.0
    terminate_grace: float = 2.0
    kill_wait: float = 2.0


class ServerProcess:
    """A running stdio server: pid, pipes, exit status and its known descendants."""

    def __init__(self, process: anyio.abc.Process, *, label: str = "", cgroup: Path | None = None) -> None:
        self._process = process
        self.pid = process.pid
        self.pgid = process.pid  # start_new_session makes the server its group's leader
        self.label = label
        self.cgroup = cgroup
        self.exited = anyio.Event()
        self.identity = identify(process.pid) or ProcessIdentity(process.pid, -1, "")
        self._known: dict[int, psutil.Process] = {}
        self._recorded: tuple[ProcessIdentity, ...] = ()
        self._torn_down = False
        try:
            self._pidfd: int | None = os.pidfd_open(self.pid)
        except (OSError, AttributeError):
            self._pidfd = None
        _LIVE[self.pid] = self

    @property
    def owned(self) -> OwnedProcess:
        """This process as the ledger records it."""
        return OwnedProcess(
            self.label,
            self.identity,
            self.pgid,
            str(self.cgroup) if self.cgroup is not None else None,
            self._recorded,
        )

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has exited (negative: killed by that signal)."""
        return self._process.returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        """The server's stdin (protocol messages to the server)."""
        assert self._process.stdin is not None
        return self._process.stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream:
        """The server's stdout (protocol messages from the server)."""
        assert self._process.stdout is not None
        return self._process.stdout

    def remember_descendants(self) -> None:
        """Record the server's current descendants so teardown finds them even if they detach."""
        for proc in reaping.tree_of(self.pid):
            self._known.setdefault(proc.pid, proc)
        live = [identify(p.pid) for p in self._known.values() if reaping.running(p)]
        known = tuple(ident for ident in live if ident is not None)
        if set(known) != set(self._recorded):
            self._recorded = known
            _tell("record", self.owned)

    async def watch_exit(self) -> None:
        """Set ``exited`` when the server process exits (run as one task per process)."""
        try:
            while self.returncode is None:
                if self._pidfd is not None:
                    await anyio.wait_readable(self._pidfd)
                    self._adopt_orphans()
                    # The pidfd turns readable at exit; the child watcher reaps it right after.
                    await anyio.sleep(_REAP_POLL_SECONDS)
                else:
                    await anyio.sleep(_FALLBACK_POLL_SECONDS)
        finally:
            self._adopt_orphans()
        self.exited.set()

    def close(self) -> None:
        """Release the pidfd (after the exit watcher stopped using it)."""
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None

    def _adopt_orphans(self) -> None:
        """Claim the supervisor's children that no live server owns: this server just left them.

        Only without a cgroup (which holds the tree anyway), and never while another spawn is
        between fork and registration, whose child would look like an orphan.
        """
        if self.cgroup is not None or _spawning or self.returncode is None:
            return
        for orphan in reaping.adopted_orphans(set(_LIVE)):
            for proc in (orphan, *reaping.tree_of(orphan.pid)):
                self._known.setdefault(proc.pid, proc)

    async def terminate(self, timings: Teardown) -> None:
        """Tear down the server and its descendants; idempotent and bounded in time."""
        if self._torn_down:
            return
        self._torn_down = True
        self._collect()
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self.stdin.aclose()
        await self._wait(lambda: self.returncode is not None, timings.stdin_close_grace)
        for sig, wait in ((signal.SIGTERM, timings.terminate_grace), (signal.SIGKILL, timings.kill_wait)):
            self._collect()
            if not self._running():
                break
            self._signal_tree(sig)
            await self._wait(lambda: not self._running(), wait)
        # Killed descendants may linger as zombies until reaped (by us as subreaper, or by init).
        await self._wait(self._gone, timings.kill_wait)
        if self.cgroup is not None and cgroups.remove(self.cgroup):
            self.cgroup = None
        await self._close_pipes()
        if self._gone():
            _tell("forget", self.owned)
        else:
            logger.warning("process %s of %s left processes that did not exit", self.pid, self.label)

    def _holds_group(self) -> bool:
        """True while the leader itself (alive or an unreaped zombie) still holds its pid, so the group id.

        ``returncode`` is not enough: asyncio's child watcher reaps the leader in a thread of its
        own and sets ``returncode`` later, on the loop. In between, the pid and the group id are
        free, and a new session leader may already hold them (pids wrap quickly when pid_max is
        32768): a killpg then would signal a process group we never started.
        """
        return self.returncode is None and identify(self.pid) == self.identity

    def _collect(self) -> None:
        """Add the server's current descendants, and its group while the leader holds the group id."""
        if self._holds_group():
            self.remember_descendants()
            for proc in reaping.group_members(self.pgid):
                if proc.pid != self.pid:
                    self._known.setdefault(proc.pid, proc)
        self._adopt_orphans()

    def _running(self) -> bool:
        return (
            self.returncode is None
            or any(reaping.running(p) for p in self._known.values())
            or bool(self.cgroup is not None and cgroups.members(self.cgroup))
        )

    def _gone(self) -> bool:
        known = list(self._known.values())
        reaping.reap(known)
        return (
            self.returncode is not None
            and not any(reaping.exists(p) for p in known)
            and not (self.cgroup is not None and cgroups.members(self.cgroup))
        )

    async def _wait(self, done: Callable[[], bool], seconds: float) -> None:
        # Polls: teardown runs under cancellation, which has stopped the exit watcher task.
        # Most servers exit a few milliseconds after stdin closes: a 10 ms step made every
        # restart wait for the step, so the first 16 polls are 1 ms apart.
        polls = 0
        with anyio.move_on_after(seconds):
            while not done():
                await anyio.sleep(_FINE_POLL_SECONDS if polls < _FINE_POLLS else _POLL_SECONDS)
                polls += 1

    def _signal_tree(self, sig: signal.Signals) -> None:
        # Only while the leader itself, checked just now, holds the group id (see _holds_group).
        if self.returncode is None and signal_group(self.identity, sig) and sig == signal.SIGTERM:
            signal_group(self.identity, signal.SIGCONT)  # a stopped process must run to exit
        for proc in self._known.values():
            if reaping.running(proc):
                with contextlib.suppress(psutil.Error):  # psutil checks the start time first
                    proc.send_signal(sig)
                    if sig == signal.SIGTERM:
                        proc.send_signal(signal.SIGCONT)
        if self.cgroup is not None:
            if sig == signal.SIGKILL:
                cgroups.kill(self.cgroup)
            else:
                cgroups.signal_members(self.cgroup, sig)

    async def _close_pipes(self) -> None:
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await stream.aclose()


_SPAWN_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.Lock] = weakref.WeakKeyDictionary()


def _spawn_lock() -> anyio.Lock:
    loop = asyncio.get_running_loop()
    lock = _SPAWN_LOCKS.get(loop)
    if lock is None:
        lock = _SPAWN_LOCKS[loop] = anyio.Lock()
    return lock


async def _spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    tree: cgroups.Cgroups | None,
    group: Path | None,
) -> anyio.abc.Process:
    inside = tree.spawning_into(group) if tree is not None and group is not None else None
    # The mark goes in last, so a declared variable of that name cannot hide the process.
    marked = {**env, MARK_ENV: own_mark()}
    with inside or contextlib.nullcontext():
        return await anyio.open_process(
            list(argv), stdin=PIPE, stdout=PIPE, stderr=PIPE, env=marked, cwd=cwd, start_new_session=True
        )


@contextlib.asynccontextmanager
async def open_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    stderr_log: StderrLog,
    teardown: Teardown,
    adopt_orphans: bool = True,
    label: str = "",
    use_cgroup: bool = True,
) -> AsyncIterator[ServerProcess]:
    """Spawn ``argv`` in a new process group (and cgroup); tear its tree down on exit from the context.

    ``label`` names the process in the ledger (the server's name). The process is recorded
    in the context's ledger before this yields, and forgotten once its tree is gone.

    Raises:
        StartError: The command could not be started (missing, not executable, bad cwd).
    """
    if adopt_orphans:
        reaping.become_subreaper()
    tree = cgroups.available() if use_cgroup else None
    group: Path | None = None
    if tree is not None:
        try:
            group = tree.create(label or "process")
        except OSError:
            group = None
    global _spawning
    _spawning += 1
    try:
        # One spawn at a time: the supervisor moves itself into the child's cgroup for the
        # spawn, and anyio yields to the loop before forking, where another spawn could move it.
        async with _spawn_lock() if group is not None else contextlib.nullcontext():
            raw = await _spawn(argv, env=env, cwd=cwd, tree=tree, group=group)
    except BaseException as exc:
        if group is not None:
            cgroups.kill(group)  # a spawn cancelled after the fork leaves a child we hold no handle to
            cgroups.remove(group)
        if not isinstance(exc, OSError):
            raise
        detail = exc.strerror or str(exc)
        where = f" (cwd {cwd})" if cwd is not None and isinstance(exc, FileNotFoundError) else ""
        raise StartError(f"cannot start {argv[0]!r}: {detail}{where}") from None
    finally:
        _spawning -= 1
    process = ServerProcess(raw, label=label, cgroup=group)
    _tell("record", process.owned)
    try:
        async with anyio.create_task_group() as tg:
            assert raw.stderr is not None
            tg.start_soon(pump_stderr, raw.stderr, stderr_log)
            tg.start_soon(process.watch_exit)
            try:
                yield process
            finally:
                # Teardown must finish even when the caller is cancelled, or a process would leak.
                with anyio.CancelScope(shield=True):
                    await process.terminate(teardown)
                process.exited.set()
                tg.cancel_scope.cancel()
    finally:
        # Also when the caller left with an error or was cancelled: a session evicted under a
        # flood of them must not keep its pidfd (the soak found one leaked per few evictions).
        process.close()
