"""One server's sessions, one after another: start, connect, list, serve, end, back off.

The half of ``ServerRuntime`` that runs (``runtime`` keeps the half that answers): each pass
resolves the launch, spawns the process (stdio) or opens the connection (remote), hand-shakes,
lists the tools, serves until the session ends and waits out the backoff before the next.
Failures are recorded as the session's end where they happen.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import httpx2
from mcp.client._transport import TransportStreams

from clawplane._utils.identity import is_stopped
from clawplane.models import McpServerSpec, Transport
from clawplane.runtimes.catalog import ServerTools
from clawplane.runtimes.client.changes import Change, ChangeFanout
from clawplane.runtimes.client.connection import Connection, open_connection
from clawplane.runtimes.clients import ClientUpstreams
from clawplane.runtimes.errors import ListingError, RequestFailedError, StartError
from clawplane.runtimes.failures import FailureTracker
from clawplane.runtimes.launch import Launch, prepare_launch
from clawplane.runtimes.oauth import credential_source, not_logged_in, session_auth
from clawplane.runtimes.process import ServerProcess, StartSlots, StderrLog
from clawplane.runtimes.proxy import Mux, open_mux
from clawplane.runtimes.redaction import Redactor
from clawplane.runtimes.session import (
    METHOD_NOT_FOUND,
    SessionEnd,
    exit_text,
    list_catalog,
    session_process,
    session_transport,
)
from clawplane.runtimes.settings import RuntimeSettings
from clawplane.runtimes.status import EventKind, Phase, RuntimeEvent
from clawplane.secrets import ResolvedSecrets

__all__ = ["CAUSE_LINES", "SessionLoop"]

# The name it had before the session loop left runtime.py: log readers filter on it.
logger = logging.getLogger("clawplane.runtimes.runtime")
_EXIT_SETTLE_SECONDS = 1.0
CAUSE_LINES = 10
"""stderr lines of the failed session logged with a start failure or crash (at WARNING)."""
_WARNING_EVENTS = frozenset(
    {EventKind.START_FAILED, EventKind.CRASHED, EventKind.GAVE_UP, EventKind.PAUSED, EventKind.WARNING}
)
_LISTEN_ACK_SECONDS = 5.0


def _end_text(process: ServerProcess) -> str:
    code = process.returncode
    return exit_text(code) if code is not None else "the server closed its stdout"


class SessionLoop:
    """The sessions of one server's runtime; ``ServerRuntime`` sets the state in its ``__init__``."""

    name: str
    spec: McpServerSpec
    base_dir: Path
    safe_name: str
    settings: RuntimeSettings
    resolved: ResolvedSecrets | None
    fanout: ChangeFanout
    stderr: StderrLog
    clients: ClientUpstreams
    done: anyio.Event
    admitted: anyio.Event
    listed: bool
    _starts: StartSlots | None
    _release_slot: Callable[[], None]
    _stop_scope: anyio.CancelScope
    _emit: Callable[[RuntimeEvent], None]
    _on_touch: Callable[[], None]
    _phase: Phase
    _phase_changed: anyio.Event
    _attempts: int
    _restarts: int
    _last_error: str | None
    _exit_code: int | None
    _noise_lines: int
    _warnings: tuple[str, ...]
    _redact: Redactor
    _conn: Connection | None
    _process: ServerProcess | None
    _mux: Mux | None
    _launch: Launch | None
    _session: SessionEnd | None
    _tools: ServerTools
    _tools_dirty: anyio.Event
    _failures: FailureTracker

    async def run(self) -> None:
        """The runtime's task: sessions, separated by backoff, until stopped."""
        try:
            with self._stop_scope:
                async with anyio.create_task_group() as background:
                    self.clients.attach(background)
                    await self._sessions_forever()
        finally:
            self.clients.attach(None)
            self._conn = None
            self._mux = None
            self._process = None
            self._set_phase(Phase.STOPPED)
            self._event(EventKind.STOPPED)
            self.admitted.set()
            self.done.set()

    async def _sessions_forever(self) -> None:
        streak = 0
        while True:
            ready_for = await self._one_session()
            if ready_for is not None and ready_for >= self.settings.stable_seconds:
                streak = 0
            recycled = self._session is not None and self._session.recycled
            self._session = None
            limit = self.settings.max_restarts
            if limit is not None and self._restarts >= limit:
                self._set_phase(Phase.FAILED)
                self._event(EventKind.GAVE_UP, self._last_error or "")
                await anyio.sleep_forever()
            streak = streak if recycled else streak + 1
            delay = 0.0 if recycled else self.settings.restart_delay(streak)
            self._restarts += 1
            self._set_phase(Phase.BACKOFF)
            self._event(EventKind.RESTART_SCHEDULED, f"restart in {delay:g}s", delay=delay)
            await anyio.sleep(delay)

    # -- sessions ------------------------------------------------------------------------
    async def _one_session(self) -> float | None:
        """Run one session; returns how long it was ready (None if it never got there)."""
        self._attempts += 1
        self._failures = self._new_tracker()
        session = self._session = SessionEnd()
        stderr_mark = self.stderr.total_lines
        self._set_phase(Phase.STARTING)
        self._event(EventKind.STARTING)
        try:
            async with self._start_slot() as release:
                self._release_slot = release
                self.admitted.set()
                await self._start_and_serve(session)
        finally:
            process, self._process, self._conn = self._process, None, None
        if process is not None:
            self._exit_code = process.returncode
            if session.reason is None and process.returncode is not None:
                session.end(exit_text(process.returncode))
        reason = session.reason or "connection closed"
        tail = self.stderr.recent(CAUSE_LINES, since=stderr_mark) if process is not None else []
        if tail and process is not None and reason.startswith(exit_text(process.returncode)):
            # "exited with code 1" says nothing; the server's last words usually say why.
            reason = f"{reason}: {tail[-1]}"
        self._last_error = reason
        if session.ready_at is None:
            self._event(EventKind.START_FAILED, reason, stderr=tail)
            return None
        self._event(EventKind.CRASHED, reason, stderr=tail)
        return anyio.current_time() - session.ready_at

    async def _start_and_serve(self, session: SessionEnd) -> None:
        """Start, become ready (``session.ready_at``) and serve until the session ends.

        Failures are caught where they happen, before they cross a task group (which would
        wrap them in an exception group), and recorded as the session's end.
        """
        try:
            launch = prepare_launch(
                self.name,
                self.spec,
                base_dir=self.base_dir,
                inherit_environment=self.settings.inherit_environment,
                resolved=self.resolved,
            )
            self._redact = launch.redact
            self._launch = launch
            self._warnings = launch.warnings
            for warning in launch.warnings:
                self._event(EventKind.WARNING, warning)
            async with self._open_process(launch, session) as process:
                await self._connect_and_serve(launch, process, session)
        except StartError as exc:
            session.end(self._redact_text(str(exc)))

    async def _connect_and_serve(
        self, launch: Launch, process: ServerProcess | None, session: SessionEnd
    ) -> None:
        async with self._primary_mux(process) as mux:
            # Caught inside the mux's task group, so it is not wrapped in an exception group.
            await self._connect(launch, mux, process, session)

    async def _connect(
        self, launch: Launch, mux: Mux | None, process: ServerProcess | None, session: SessionEnd
    ) -> None:
        source = credential_source(self.settings)
        async with session_auth(self.name, launch, source) as auth:
            try:
                async with open_connection(
                    self._transport(launch, mux, auth),
                    server=self.name,
                    connect_timeout=self.spec.connection_timeout_ms / 1000,
                    request_timeout=self.spec.request_timeout_ms / 1000,
                    fanout=self.fanout,
                    redact=self._redact_text,
                    closed=session.over,
                ) as conn:
                    await self._serve(conn, launch, session)
            except StartError as exc:
                if auth is not None and auth.login_required:
                    per_requester = launch.oauth is not None and launch.oauth.per_requester
                    session.end(not_logged_in(source.login_command(self.name), per_requester=per_requester))
                await self._start_failed(exc, process, session)

    async def _start_failed(
        self, exc: StartError, process: ServerProcess | None, session: SessionEnd
    ) -> None:
        if process is not None:
            # The handshake usually fails because the process died: say that instead.
            with anyio.move_on_after(_EXIT_SETTLE_SECONDS):
                await process.exited.wait()
            if process.returncode is not None:
                session.end(f"{exit_text(process.returncode)} during startup")
        session.end(self._redact_text(str(exc)))

    async def _serve(self, conn: Connection, launch: Launch, session: SessionEnd) -> None:
        """Follow changes, list the tools, become ready and serve until the session ends."""
        self._tools_dirty = anyio.Event()
        unsubscribe = self.fanout.subscribe(self._on_change)
        try:
            async with anyio.create_task_group() as tg:
                # Listen first, list second: a change in between is then never missed. A
                # server slow to acknowledge does not hold up the start; the catalog is
                # listed again once it does.
                subscribed = anyio.Event()
                tg.start_soon(conn.follow_changes, subscribed)
                with anyio.move_on_after(_LISTEN_ACK_SECONDS):
                    await subscribed.wait()
                if not subscribed.is_set():
                    tg.start_soon(self._relist_after, subscribed)
                try:
                    await self._load_catalog(conn, launch.description)
                except (ListingError, RequestFailedError) as exc:
                    session.end(self._redact_text(str(exc)))
                else:
                    session.ready_at = anyio.current_time()
                    self._become_ready(conn)
                    tg.start_soon(self._refresh_tools, conn)
                    tg.start_soon(self._keep_alive, conn, session)
                    await session.over.wait()
                tg.cancel_scope.cancel()
        finally:
            # The client closes right after this; nobody may read it through ``_conn`` any more.
            self._conn = None
            unsubscribe()
            if self._phase is Phase.READY:
                # Tearing a stopped or hung process down takes seconds; status must not say
                # Ready (with no pid once it is killed) while that happens.
                self._set_phase(Phase.BACKOFF)

    def _open_process(
        self, launch: Launch, session: SessionEnd
    ) -> AbstractAsyncContextManager[ServerProcess | None]:
        return session_process(
            launch,
            session,
            settings=self.settings,
            stderr_log=self.stderr,
            on_spawn=self._spawned,
            label=self.name,
        )

    def _spawned(self, process: ServerProcess) -> None:
        self._process = process
        self._touch()

    @contextlib.asynccontextmanager
    async def _primary_mux(self, process: ServerProcess | None) -> AsyncIterator[Mux | None]:
        """The primary process's mux (None for remote servers), shared with the hosted endpoint."""
        if process is None:
            yield None
            return
        async with open_mux(
            process,
            name=self.name,
            max_message_bytes=self.settings.max_message_bytes,
            on_noise=self._noise,
            describe_end=lambda: _end_text(process),
            share_initialize=True,
        ) as mux:
            self._mux = mux
            try:
                yield mux
            finally:
                self._mux = None

    def _transport(
        self, launch: Launch, mux: Mux | None, auth: httpx2.Auth | None = None
    ) -> AbstractAsyncContextManager[TransportStreams]:
        return session_transport(launch, self.spec, mux, auth)

    async def _load_catalog(self, conn: Connection, launch_description: str) -> None:
        self._tools = await list_catalog(
            conn, self.name, self.safe_name, self.spec, settings=self.settings, launch=launch_description
        )
        self.listed = True

    def _start_slot(self) -> AbstractAsyncContextManager[Callable[[], None]]:
        """A start slot for a process this runtime spawns; a remote server starts at once."""
        if self._starts is None or self.spec.effective_transport is not Transport.STDIO:
            return contextlib.nullcontext(lambda: None)
        return self._starts.slot()

    def _become_ready(self, conn: Connection) -> None:
        self._release_slot()  # the next server may start while this one serves
        self._conn = conn
        self._last_error = None
        if self._process is not None:
            self._process.remember_descendants()
        self._set_phase(Phase.READY)
        tools = self._tools
        self._event(EventKind.READY, f"{len(tools.tools)} tools ({tools.filtered} filtered)")

    async def _keep_alive(self, conn: Connection, session: SessionEnd) -> None:
        """End the session when the server stops answering, even if nobody calls it."""
        interval = self.settings.ping_interval
        if not interval:
            return
        timeout = min(self.settings.ping_timeout, conn.request_timeout)
        while True:
            await anyio.sleep(interval)
            process = self._process
            if process is not None and is_stopped(process.pid):
                reason = f"process {process.pid} is stopped (SIGSTOP or a debugger) and cannot answer"
                self._event(EventKind.WARNING, reason)
                session.end(reason)
                return
            try:
                await conn.check_alive(timeout)
            except RequestFailedError as exc:
                if exc.code != METHOD_NOT_FOUND:  # "no ping here" is an answer too
                    reason = self._redact_text(f"liveness check failed: {exc}")
                    self._event(EventKind.WARNING, reason)
                    session.end(reason)
                    return
            if process is not None:
                process.remember_descendants()

    async def _relist_after(self, subscribed: anyio.Event) -> None:
        await subscribed.wait()
        self._tools_dirty.set()

    def _on_change(self, change: Change) -> None:
        if change is Change.TOOLS:
            self._tools_dirty.set()

    async def _refresh_tools(self, conn: Connection) -> None:
        while True:
            await self._tools_dirty.wait()
            self._tools_dirty = anyio.Event()
            try:
                await self._load_catalog(conn, self._tools.launch)
            except (ListingError, RequestFailedError) as exc:
                self._last_error = self._redact_text(f"refreshing the tool list failed: {exc}")
                self._event(EventKind.WARNING, self._last_error)
                await anyio.sleep(self.settings.catalog_retry_seconds)
                self._tools_dirty.set()
                continue
            self._touch()
            self._event(EventKind.TOOLS_CHANGED, f"{len(self._tools.tools)} tools")

    # -- helpers -------------------------------------------------------------------------
    def _new_tracker(self) -> FailureTracker:
        return FailureTracker(
            self.name, threshold=self.settings.failure_threshold, pause_seconds=self.settings.pause_seconds
        )

    def _redact_text(self, text: str) -> str:
        return self._redact(text)

    def _noise(self, message: str) -> None:
        self._noise_lines += 1
        logger.debug("%s: %s", self.name, self._redact_text(message))

    def _set_phase(self, phase: Phase) -> None:
        if phase is not self._phase:
            self._phase = phase
            changed, self._phase_changed = self._phase_changed, anyio.Event()
            changed.set()
            self._touch()

    def _touch(self) -> None:
        """Tell the supervisor the status changed (it wakes its waiters)."""
        self._on_touch()

    def _event(
        self,
        kind: EventKind,
        message: str = "",
        *,
        delay: float | None = None,
        stderr: list[str] | None = None,
    ) -> None:
        event = RuntimeEvent(server=self.name, kind=kind, message=message, delay=delay)
        level = logging.WARNING if kind in _WARNING_EVENTS else logging.INFO
        logger.log(level, "MCP server %s: %s %s", self.name, kind.value, message)
        for line in stderr or ():
            logger.log(level, "MCP server %s: stderr: %s", self.name, line)
        self._emit(event)
        self._touch()
