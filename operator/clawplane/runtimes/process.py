"""A stdio MCP server's process: its own process group, its exit watched, its whole tree torn down.

``open_process`` spawns the command with ``start_new_session=True`` (so the server leads a
new process group), reads its stderr into a ``StderrLog`` for as long as it lives, and on
exit from the context tears the tree down within a bounded time, shielded from cancellation:

1. close stdin and give the server ``stdin_close_grace`` to exit on its own;
2. SIGTERM the process group and every known descendant, wait ``terminate_grace``;
3. SIGKILL whatever is left and wait up to ``kill_wait`` for it to disappear, reaping the
   descendants that were reparented to clawplane (it is a subreaper, see ``reaping``).

Known descendants are the server's children (recursively) seen when it became ready and
when teardown starts, plus every member of its process group; that catches helpers that
moved to a session of their own. Exit is detected with a pidfd, not ``Process.wait()``,
which on asyncio also waits for the pipes to close and so hangs while a grandchild still
holds them.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE

import anyio
import anyio.abc
import psutil

from clawplane.runtimes import reaping
from clawplane.runtimes.errors import StartError
from clawplane.runtimes.stderr import StderrLog, pump_stderr

__all__ = ["ServerProcess", "Teardown", "open_process"]

_POLL_SECONDS = 0.01
_REAP_POLL_SECONDS = 0.005
_FALLBACK_POLL_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class Teardown:
    """Grace periods of a process-tree teardown, in seconds."""

    stdin_close_grace: float = 2.0
    terminate_grace: float = 2.0
    kill_wait: float = 2.0


class ServerProcess:
    """A running stdio server: pid, pipes, exit status and its known descendants."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self._process = process
        self.pid = process.pid
        self.pgid = process.pid  # start_new_session makes the server its group's leader
        self.exited = anyio.Event()
        self._known: dict[int, psutil.Process] = {}
        self._torn_down = False

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

    async def watch_exit(self) -> None:
        """Set ``exited`` when the server process exits (run as one task per process)."""
        try:
            pidfd: int | None = os.pidfd_open(self.pid)
        except OSError:
            pidfd = None
        try:
            while self.returncode is None:
                if pidfd is not None:
                    await anyio.wait_readable(pidfd)
                    # The pidfd turns readable at exit; the child watcher reaps it right after.
                    await anyio.sleep(_REAP_POLL_SECONDS)
                else:
                    await anyio.sleep(_FALLBACK_POLL_SECONDS)
        finally:
            if pidfd is not None:
                os.close(pidfd)
        self.exited.set()

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
        await self._close_pipes()

    def _collect(self) -> None:
        """Add the server's current descendants and process-group members to the known set."""
        if self.returncode is None:
            self.remember_descendants()
        for proc in reaping.group_members(self.pgid):
            if proc.pid != self.pid:
                self._known.setdefault(proc.pid, proc)

    def _running(self) -> bool:
        return self.returncode is None or any(reaping.running(p) for p in self._known.values())

    def _gone(self) -> bool:
        known = list(self._known.values())
        reaping.reap(known)
        return self.returncode is not None and not any(reaping.exists(p) for p in known)

    async def _wait(self, done: Callable[[], bool], seconds: float) -> None:
        # Polls: teardown runs under cancellation, which has stopped the exit watcher task.
        with anyio.move_on_after(seconds):
            while not done():
                await anyio.sleep(_POLL_SECONDS)

    def _signal_tree(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, sig)
        for proc in self._known.values():
            if reaping.running(proc):
                with contextlib.suppress(psutil.Error):
                    proc.send_signal(sig)

    async def _close_pipes(self) -> None:
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await stream.aclose()


@contextlib.asynccontextmanager
async def open_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    stderr_log: StderrLog,
    teardown: Teardown,
    adopt_orphans: bool = True,
) -> AsyncIterator[ServerProcess]:
    """Spawn ``argv`` in a new process group; tear its tree down on exit from the context.

    Raises:
        StartError: The command could not be started (missing, not executable, bad cwd).
    """
    if adopt_orphans:
        reaping.become_subreaper()
    try:
        raw = await anyio.open_process(
            list(argv), stdin=PIPE, stdout=PIPE, stderr=PIPE, env=dict(env), cwd=cwd, start_new_session=True
        )
    except OSError as exc:
        detail = exc.strerror or str(exc)
        where = f" (cwd {cwd})" if cwd is not None and isinstance(exc, FileNotFoundError) else ""
        raise StartError(f"cannot start {argv[0]!r}: {detail}{where}") from None
    process = ServerProcess(raw)
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
