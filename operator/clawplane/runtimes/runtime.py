"""One server's runtime: keep it running (or connected), know its tools, restart it, stop it.

``ServerRuntime.run`` is one task in the supervisor's task group. Each pass starts a
*session*: resolve the launch (secrets are read now), spawn the process (stdio) or open
the connection (remote), hand-shake within ``connectionTimeoutMs``, list the tools, then
serve calls and follow ``list_changed`` until the session ends. A session ends when the
process exits, the transport closes, or repeated timeouts ask for a recycle; the runtime
then waits out an exponential backoff and starts the next session. ``stop`` cancels the
task; the process tree is torn down (bounded, shielded) on the way out.

A runtime that hangs on initialize only holds its own task, so it cannot stall the others.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
from mcp.client._transport import TransportStreams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from clawplane._utils.identity import is_stopped
from clawplane.models import Hosting, McpServerSpec, Transport
from clawplane.naming import is_tool_allowed
from clawplane.naming.toolapproval import needs_approval, rule_for
from clawplane.runtimes import calls
from clawplane.runtimes.catalog import ServerTools, ToolKind
from clawplane.runtimes.changes import Change, ChangeFanout
from clawplane.runtimes.clients import ClientUpstreams
from clawplane.runtimes.connection import Connection, open_connection
from clawplane.runtimes.errors import (
    ListingError,
    RequestFailedError,
    RequestTimeoutError,
    ServerUnavailableError,
    StartError,
)
from clawplane.runtimes.failures import FailureTracker, Verdict
from clawplane.runtimes.launch import Launch, prepare_launch
from clawplane.runtimes.listing import ListLimits
from clawplane.runtimes.oauth.messages import not_logged_in
from clawplane.runtimes.oauth.session import credential_source, session_auth
from clawplane.runtimes.process.child import ServerProcess
from clawplane.runtimes.process.starts import StartSlots
from clawplane.runtimes.process.stderr import StderrLog
from clawplane.runtimes.proxy.gate import CallGate, ToolGate, refusing_gate
from clawplane.runtimes.proxy.hosting import SessionPolicy, UnavailableError, discovery_of
from clawplane.runtimes.proxy.mux import Mux
from clawplane.runtimes.proxy.upstream import open_mux
from clawplane.runtimes.redaction import Redactor, describe_launch
from clawplane.runtimes.session import (
    METHOD_NOT_FOUND,
    SessionEnd,
    exit_text,
    list_catalog,
    session_process,
    session_transport,
)
from clawplane.runtimes.settings import RuntimeSettings
from clawplane.runtimes.status import EventKind, Phase, RuntimeEvent, RuntimeStatus, ToolResult
from clawplane.secrets import ResolvedSecrets

__all__ = ["ServerRuntime"]

logger = logging.getLogger(__name__)
_EXIT_SETTLE_SECONDS = 1.0
CAUSE_LINES = 10
"""stderr lines of the failed session logged with a start failure or crash (at WARNING)."""
_WARNING_EVENTS = frozenset(
    {EventKind.START_FAILED, EventKind.CRASHED, EventKind.GAVE_UP, EventKind.PAUSED, EventKind.WARNING}
)
_LISTEN_ACK_SECONDS = 5.0
T = TypeVar("T")


def _end_text(process: ServerProcess) -> str:
    code = process.returncode
    return exit_text(code) if code is not None else "the server closed its stdout"


class ServerRuntime:
    """Keeps one MCP server running or connected, and answers for it."""

    def __init__(
        self,
        name: str,
        spec: McpServerSpec,
        *,
        config_hash: str,
        base_dir: Path,
        safe_name: str,
        settings: RuntimeSettings,
        emit: Callable[[RuntimeEvent], None],
        on_touch: Callable[[], None] = lambda: None,
        resolved: ResolvedSecrets | None = None,
        tool_gate: Callable[[], ToolGate | None] = lambda: None,
        starts: StartSlots | None = None,
    ) -> None:
        self.name = name
        self._starts = starts
        self.admitted = anyio.Event()
        """Set once the first start got its slot (or the runtime ended before)."""
        self._release_slot: Callable[[], None] = lambda: None
        self._tool_gate = tool_gate
        self.resolved = resolved
        self.spec = spec
        self.config_hash = config_hash
        self.base_dir = base_dir
        self.safe_name = safe_name
        self.settings = settings
        self.fanout = ChangeFanout()  # outlives sessions, so bridge subscriptions survive restarts
        self.done = anyio.Event()
        self.listed = False
        self._emit = emit
        self._on_touch = on_touch
        self._phase = Phase.STARTING
        self._phase_changed = anyio.Event()
        self._attempts = 0
        self._restarts = 0
        self._last_error: str | None = None
        self._exit_code: int | None = None
        self._noise_lines = 0
        self._warnings: tuple[str, ...] = ()
        self._redact = Redactor()
        self._conn: Connection | None = None
        self._process: ServerProcess | None = None
        self._mux: Mux | None = None
        self._launch: Launch | None = None
        self._client_sessions = 0
        self._session_evictions = 0
        self._session: SessionEnd | None = None
        self._tools = ServerTools(server=name, safe_server=safe_name, launch=describe_launch(spec))
        self._tools_dirty = anyio.Event()
        self._failures = self._new_tracker()
        self._stop_scope = anyio.CancelScope()
        self.stderr = StderrLog(
            name,
            max_line_bytes=settings.stderr_line_bytes,
            history=settings.stderr_history,
            redact=self._redact_text,
            on_update=self._touch,
        )
        self.clients = ClientUpstreams(
            name,
            settings=settings,
            stderr=self.stderr,
            primary=self.primary,
            launch=lambda: self._launch,
            mode=lambda: self.spec.sessions,
            primary_is_modern=self._primary_is_modern,
            on_noise=self._noise,
        )

    # -- public --------------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        """The runtime's phase."""
        return self._phase

    @property
    def attempts(self) -> int:
        """How many sessions have been attempted (settled once at least one has)."""
        return self._attempts

    @property
    def hosted(self) -> bool:
        """True for stdio servers clawplane keeps running for agents (exposed by the bridge)."""
        return self.spec.effective_transport is Transport.STDIO and self.spec.hosting is Hosting.CLAWPLANE

    @property
    def tools(self) -> ServerTools:
        """The current tool catalog of this server."""
        return self._tools

    @property
    def connection(self) -> Connection | None:
        """The live connection, if the server is ready."""
        return self._conn if self._phase is Phase.READY else None

    def status(self) -> RuntimeStatus:
        """A snapshot of this runtime."""
        conn = self._conn if self._phase is Phase.READY else None
        info = conn.server_info if conn else None
        process = self._process
        return RuntimeStatus(
            name=self.name,
            safe_name=self.safe_name,
            transport=str(self.spec.effective_transport),
            config_hash=self.config_hash,
            phase=self._phase,
            launch=self._tools.launch,
            pid=process.pid if process is not None and process.returncode is None else None,
            restarts=self._restarts,
            last_error=self._last_error,
            paused_until=self._failures.paused_until,
            consecutive_failures=self._failures.failures,
            server_name=info.name if info else None,
            server_version=info.version if info else None,
            protocol_version=conn.protocol_version if conn else None,
            tool_count=len(self._tools.tools),
            filtered_tool_count=self._tools.filtered,
            hosted=self.hosted,
            warnings=self._warnings,
            exit_code=self._exit_code,
            stderr_lines=self.stderr.total_lines,
            stdout_noise=self._noise_lines,
            sessions=self._client_sessions,
            session_evictions=self._session_evictions,
            session_pids=tuple(sorted(p.pid for p in self.clients.processes if p.returncode is None)),
        )

    def rename(self, safe_name: str) -> None:
        """Change the safe server name (a declaration elsewhere shifted the suffixes)."""
        if safe_name != self.safe_name:
            self.safe_name = safe_name
            self._tools = dataclasses.replace(self._tools, safe_server=safe_name)
            self._touch()

    def require_connection(self) -> Connection:
        """The live connection, for a request that counts towards pausing.

        Raises:
            ServerUnavailableError: Not connected right now.
            ServerPausedError: Paused after repeated failures.
        """
        conn = self.connection
        if conn is None:
            raise ServerUnavailableError(f'MCP server "{self.name}" is not connected ({self._phase.value})')
        self._failures.check()
        return conn

    async def wait_connection(self, timeout: float | None = None) -> Connection:
        """The live connection, waiting while the server (re)starts (default: its connect timeout).

        Raises:
            ServerUnavailableError: Still not connected after waiting, or paused.
        """
        seconds = self.spec.connection_timeout_ms / 1000 if timeout is None else timeout
        with anyio.move_on_after(seconds):
            while self.connection is None and self._phase in (Phase.STARTING, Phase.BACKOFF):
                await self._phase_changed.wait()
        return self.require_connection()

    # -- hosting (the proxy's view, see ``proxy.hosting.Hosted``) ------------------------
    @property
    def policy(self) -> SessionPolicy:
        """Session isolation and limits of this server's hosted endpoint."""
        return SessionPolicy(
            mode=self.spec.sessions,
            max_sessions=self.spec.max_sessions,
            idle_ttl=self.spec.session_idle_ttl_ms / 1000,
            per_consumer=self.spec.max_sessions_per_consumer,
            connect_timeout=self.spec.connection_timeout_ms / 1000,
        )

    async def primary(self) -> Mux:
        """The primary process's mux, waiting while the server (re)starts.

        Raises:
            UnavailableError: Not ready within the connection timeout, paused, or gone.
        """
        with anyio.move_on_after(self.spec.connection_timeout_ms / 1000):
            while (self._mux is None or self._phase is not Phase.READY) and self._phase in (
                Phase.STARTING,
                Phase.BACKOFF,
            ):
                await self._phase_changed.wait()
        mux = self._mux
        if mux is None or self._phase is not Phase.READY or mux.gone is not None:
            why = f" ({self._last_error})" if self._last_error else ""
            raise UnavailableError(
                f'MCP server "{self.name}" is not ready: it is {self._phase.value}{why}; '
                f"see `clawplane status {self.name}` for its stderr"
            )
        return mux

    def session_upstream(self, label: str) -> AbstractAsyncContextManager[Mux]:
        """The upstream of one handshake-era client session (``clients.ClientUpstreams``)."""
        return self.clients.session(label)

    def tool_allowed(self, tool: str) -> bool:
        """Whether the declared ``toolFilter`` lets clients of the hosted endpoint see ``tool``."""
        flt = self.spec.tool_filter
        return flt is None or is_tool_allowed(tool, include=flt.include, exclude=flt.exclude)

    def tool_input_schema(self, tool: str) -> Mapping[str, Any] | None:
        """A tool's input schema as a fresh session lists it."""
        return next((t.input_schema for t in self._tools.tools if t.name == tool), None)

    def call_gate(self, caller: str, *, endpoint: str | None = None) -> CallGate | None:
        """``toolApproval`` for ``caller``'s calls on ``endpoint`` (default: the hosted one), held by
        the supervisor's gate (refused without one)."""
        if self.spec.tool_approval is None:
            return None
        gate = self._tool_gate() or refusing_gate
        return CallGate(self.name, caller, self.approval_rule, gate, endpoint=endpoint or f"/mcp/{self.name}")

    def approval_rule(self, tool: str) -> tuple[str, str, float] | None:
        """``(pattern, mode, timeout_s)`` when a call to raw tool ``tool`` waits for an approval.

        The mode is applied as Codex applies it (``naming.toolapproval``), with the tool's
        annotations as the server listed them; a tool not listed yet has none, so an
        ``auto`` rule holds it.
        """
        approval = self.spec.tool_approval
        found = rule_for(tool, approval.tools) if approval is not None else None
        if approval is None or found is None:
            return None
        pattern, mode = found
        annotations = next((t.annotations for t in self._tools.tools if t.name == tool), None)
        if not needs_approval(str(mode), annotations):
            return None
        return pattern, str(mode), approval.timeout_ms / 1000

    def sessions_changed(self, count: int) -> None:
        """The hosted endpoint now holds ``count`` client sessions of this server."""
        if count != self._client_sessions:
            self._client_sessions = count
            self._touch()

    def session_evicted(self) -> None:
        """The hosted endpoint ended an idle client session of this server to make room."""
        self._session_evictions += 1
        self._touch()

    def handshake_discovery(self) -> Mapping[str, Any] | None:
        """``server/discover``'s result for 2026-07-28 clients when the server speaks only the
        handshake era (made of its ``initialize`` answer); None when it speaks 2026-07-28 itself."""
        conn = self._conn if self._phase is Phase.READY else None
        if conn is None or conn.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None
        return discovery_of(conn.capabilities, conn.server_info, conn.instructions)

    def _primary_is_modern(self) -> bool:
        conn = self._conn
        return conn is not None and conn.protocol_version in MODERN_PROTOCOL_VERSIONS

    def record_success(self) -> None:
        """A guarded request succeeded."""
        if self._failures.failures:
            self._failures.record_success()
            self._touch()

    def record_failure(self, exc: RequestFailedError) -> None:
        """A guarded request failed: count it, and pause or recycle at the threshold."""
        verdict = self._failures.record_failure(timed_out=isinstance(exc, RequestTimeoutError))
        self._last_error = str(exc)
        if verdict is Verdict.PAUSED:
            self._event(EventKind.PAUSED, f"paused until {self._failures.paused_until}: {exc}")
        elif verdict is Verdict.RECYCLE and self._session is not None:
            self._event(EventKind.RECYCLED, "recycling after repeated request timeouts")
            self._session.end("repeated request timeouts", recycled=True)
        self._touch()

    async def call_tool(self, tool: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call one of the server's tools (raw name), counting failures towards a pause.

        Raises:
            ServerUnavailableError: Not connected, or paused (``ServerPausedError``).
            RequestFailedError: The call failed or timed out.
        """
        conn = self.require_connection()
        return await self.guard(calls.call_tool(conn, tool, arguments))

    async def run_utility(self, kind: ToolKind, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Answer a resources/prompts utility entry of the catalog, like ``call_tool``."""
        conn = self.require_connection()
        limits = ListLimits(
            timeout=conn.request_timeout,
            pages=self.settings.max_list_pages,
            items=self.settings.max_list_items,
            bytes=self.settings.max_list_bytes,
        )
        return await self.guard(calls.run_utility(conn, kind, arguments, limits))

    async def guard(self, call: Awaitable[T]) -> T:
        """Await a request to this server, counting its failure or success towards a pause."""
        try:
            result = await call
        except (RequestFailedError, ListingError) as exc:
            failure = exc if isinstance(exc, RequestFailedError) else RequestFailedError(str(exc))
            self.record_failure(failure)
            raise failure from None
        self.record_success()
        return result

    async def stop(self) -> None:
        """Stop the runtime and wait until its process tree is gone."""
        if not self.done.is_set():
            self._set_phase(Phase.STOPPING)
        timings = self.settings
        await self.clients.close(timings.stdin_close_grace + timings.terminate_grace + 2 * timings.kill_wait)
        self._stop_scope.cancel()
        await self.done.wait()

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
