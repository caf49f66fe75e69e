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

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from clawplane.models import Hosting, McpServerSpec, Transport
from clawplane.naming import is_tool_allowed, needs_approval, rule_for
from clawplane.runtimes.catalog import ServerTools, ToolKind
from clawplane.runtimes.client import calls
from clawplane.runtimes.client.changes import ChangeFanout
from clawplane.runtimes.client.connection import Connection
from clawplane.runtimes.client.listing import ListLimits
from clawplane.runtimes.clients import ClientUpstreams
from clawplane.runtimes.errors import (
    ListingError,
    RequestFailedError,
    RequestTimeoutError,
    ServerUnavailableError,
)
from clawplane.runtimes.failures import Verdict
from clawplane.runtimes.launch import Launch
from clawplane.runtimes.process import ServerProcess, StartSlots, StderrLog
from clawplane.runtimes.proxy import (
    CallGate,
    Mux,
    SessionPolicy,
    ToolGate,
    UnavailableError,
    discovery_of,
    refusing_gate,
)
from clawplane.runtimes.redaction import Redactor, describe_launch
from clawplane.runtimes.session import (
    SessionEnd,
)
from clawplane.runtimes.sessionloop import SessionLoop
from clawplane.runtimes.settings import RuntimeSettings
from clawplane.runtimes.status import EventKind, Phase, RuntimeEvent, RuntimeStatus, ToolResult
from clawplane.secrets import ResolvedSecrets
from clawplane.telemetry import CallSite, CallTelemetry

__all__ = ["ServerRuntime"]

T = TypeVar("T")


class ServerRuntime(SessionLoop):
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

    @property
    def telemetry(self) -> CallTelemetry | None:
        """Where the proxy reports this server's traffic (``RuntimeSettings.telemetry``)."""
        return self.settings.telemetry

    def call_site(
        self,
        endpoint: str,
        consumer: str,
        *,
        agent: str | None = None,
        session: str | None = None,
        revision: str | None = None,
    ) -> CallSite:
        """Where a party's requests come from: tool names this server lists are metric labels, and
        error messages pass this server's redactor."""
        return CallSite(
            endpoint, self.name, consumer, agent=agent, session=session, revision=revision,
            known_tool=self._lists_tool, redact=self._redact_text,
        )  # fmt: skip

    def _lists_tool(self, tool: str) -> bool:
        return any(t.name == tool for t in self._tools.tools)

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
