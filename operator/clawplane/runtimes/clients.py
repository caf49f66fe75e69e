"""Upstreams for the hosted endpoint's handshake-era client sessions of one runtime.

``perClient`` (the default): every client session gets a process of its own, started
from the runtime's resolved launch (same command, environment and working directory as
the primary process) and torn down, whole tree, when the session ends, goes idle, or the
runtime stops. One client's session state — subscriptions, resources it created, tools
it made appear — therefore never reaches another client, nor the supervisor's catalog.

``shared``: all client sessions share one handshake-era process. That is the primary
process when it negotiated the handshake era; when the primary speaks 2026-07-28 (whose
connections are locked to that era) a second, long-lived process is started on first use
and kept while sessions use it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from clawplane.models import SessionMode
from clawplane.runtimes.errors import StartError
from clawplane.runtimes.launch import Launch
from clawplane.runtimes.process import ServerProcess, StderrLog, Teardown, open_process
from clawplane.runtimes.proxy import Mux, UnavailableError, open_mux
from clawplane.runtimes.settings import RuntimeSettings

if TYPE_CHECKING:
    from collections.abc import Awaitable

__all__ = ["ClientUpstreams"]

logger = logging.getLogger(__name__)


def _ended(process: ServerProcess) -> Callable[[], str]:
    def describe() -> str:
        code = process.returncode
        if code is None:
            return "the server closed its stdout"
        return (
            f"the server process exited with code {code}"
            if code >= 0
            else f"the server process was killed by signal {-code}"
        )

    return describe


class ClientUpstreams:
    """Per-client (or shared) upstream processes of one runtime (see the module docstring)."""

    def __init__(
        self,
        name: str,
        *,
        settings: RuntimeSettings,
        stderr: StderrLog,
        primary: Callable[[], Awaitable[Mux]],
        launch: Callable[[], Launch | None],
        mode: Callable[[], SessionMode],
        primary_is_modern: Callable[[], bool],
        on_noise: Callable[[str], None],
        on_spawn: Callable[[ServerProcess], None] = lambda _p: None,
        on_exit: Callable[[ServerProcess], None] = lambda _p: None,
    ) -> None:
        self.name = name
        self._settings = settings
        self._stderr = stderr
        self._primary = primary
        self._launch = launch
        self._mode = mode
        self._primary_is_modern = primary_is_modern
        self._on_noise = on_noise
        self._on_spawn = on_spawn
        self._on_exit = on_exit
        self._scopes: set[anyio.CancelScope] = set()
        self._idle = anyio.Event()
        self._idle.set()
        self._shared: Mux | None = None
        self._shared_users = 0
        self._shared_lock = anyio.Lock()
        self._shared_scope: anyio.CancelScope | None = None
        self.processes: set[ServerProcess] = set()
        self._holder: anyio.abc.TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def session(self, label: str) -> AsyncIterator[Mux]:
        """The upstream of one client session.

        Raises:
            UnavailableError: The server is not ready, or the session's process failed to start.
        """
        primary = await self._primary()
        if self._mode() is SessionMode.SHARED:
            if not self._primary_is_modern():
                yield primary
                return
            async with self._shared_session() as mux:
                yield mux
            return
        async with self._tracked(), self._process(label) as mux:
            yield mux

    @contextlib.asynccontextmanager
    async def _tracked(self) -> AsyncIterator[None]:
        # The scope lets stop() end sessions that run in the listener's tasks, not ours.
        with anyio.CancelScope() as scope:
            self._scopes.add(scope)
            self._idle = anyio.Event()
            try:
                yield
            finally:
                self._scopes.discard(scope)
                if not self._scopes:
                    self._idle.set()

    @contextlib.asynccontextmanager
    async def _process(self, label: str, *, share_initialize: bool = False) -> AsyncIterator[Mux]:
        launch = self._launch()
        if launch is None or not launch.argv:
            raise UnavailableError(f'MCP server "{self.name}" has no resolved command yet')
        settings = self._settings
        teardown = Teardown(settings.stdin_close_grace, settings.terminate_grace, settings.kill_wait)
        try:
            process_cm = open_process(
                launch.argv,
                env=launch.env,
                cwd=launch.cwd,
                stderr_log=self._stderr,
                teardown=teardown,
                adopt_orphans=settings.adopt_orphans,
            )
            async with process_cm as process:
                self.processes.add(process)
                self._on_spawn(process)
                try:
                    async with open_mux(
                        process,
                        name=self.name,
                        max_message_bytes=settings.max_message_bytes,
                        on_noise=self._on_noise,
                        describe_end=_ended(process),
                        share_initialize=share_initialize,
                    ) as mux:
                        logger.debug("%s: started pid %s for %s", self.name, process.pid, label)
                        yield mux
                finally:
                    self.processes.discard(process)
                    self._on_exit(process)
        except StartError as exc:
            raise UnavailableError(f'MCP server "{self.name}": {exc}') from None

    @contextlib.asynccontextmanager
    async def _shared_session(self) -> AsyncIterator[Mux]:
        async with self._shared_lock:
            if self._shared is None or self._shared.gone is not None:
                self._shared = await self._start_shared()
            self._shared_users += 1
        try:
            yield self._shared
        finally:
            self._shared_users -= 1
            if self._shared_users == 0 and self._shared_scope is not None:
                self._shared_scope.cancel()
                self._shared = None

    async def _start_shared(self) -> Mux:
        started: list[Mux] = []
        ready = anyio.Event()
        failure: list[BaseException] = []

        async def hold(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            with anyio.CancelScope() as scope:
                self._shared_scope = scope
                try:
                    async with self._process("shared sessions", share_initialize=True) as mux:
                        started.append(mux)
                        ready.set()
                        await mux.ended.wait()
                except UnavailableError as exc:
                    failure.append(exc)
                    ready.set()

        holder = self._holder
        if holder is None:
            raise UnavailableError(f'MCP server "{self.name}" is stopping')
        holder.start_soon(hold)
        await ready.wait()
        if failure:
            raise failure[0]
        return started[0]

    def attach(self, task_group: anyio.abc.TaskGroup | None) -> None:
        """Where long-lived shared processes run (the runtime's own task group)."""
        self._holder = task_group

    @property
    def count(self) -> int:
        """Client-session processes running now."""
        return len(self.processes)

    async def close(self, timeout: float) -> None:
        """End every client session and wait (bounded) until their processes are gone."""
        for scope in list(self._scopes):
            scope.cancel()
        if self._shared_scope is not None:
            self._shared_scope.cancel()
        with anyio.move_on_after(timeout):
            await self._idle.wait()
