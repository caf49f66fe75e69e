"""The supervisor: every MCP runtime of one clawplane instance, behind a small async API.

The reconcile engine drives it from a long-running task group::

    async with Supervisor(settings=RuntimeSettings(), on_event=print) as supervisor:
        await supervisor.ensure("github", spec, config_hash=h, base_dir=folder, safe_name="github")
        await supervisor.wait_until("github", lambda s: s.phase is Phase.READY, timeout=30)
        tools = supervisor.catalog(["github"])
        result = await supervisor.call_tool("github", "search_issues", {"q": "bug"})
        endpoint = await supervisor.expose(guard)  # hosted servers at endpoint.url(name)
        await supervisor.remove("github")

``ensure`` returns at once: starting happens in the runtime's own task, so a server that
hangs on initialize blocks nobody; use ``wait_until`` to wait for a phase. Calls for one
name are serialized (ensure/remove), different names proceed in parallel. Leaving the
context (or ``aclose``) tears every runtime down, concurrently and bounded in time.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from starlette.types import ASGIApp

from clawplane.models import McpServerSpec
from clawplane.naming import SERVER_NAME_FALLBACK, SERVER_NAME_MAX, sanitize_fragment
from clawplane.runtimes.catalog import ServerTools, ToolEntry, ToolKind, merge_catalog
from clawplane.runtimes.errors import UnknownServerError
from clawplane.runtimes.process import StartSlots, default_start_slots
from clawplane.runtimes.proxy import Endpoint, ProxyHandle, RequestGuard, Route, ToolGate, bind, serve_proxy
from clawplane.runtimes.runtime import ServerRuntime
from clawplane.runtimes.settings import RuntimeSettings
from clawplane.runtimes.status import Phase, RuntimeEvent, RuntimeStatus, ToolResult
from clawplane.secrets import ResolvedSecrets

__all__ = ["Supervisor"]

logger = logging.getLogger(__name__)


def _stopped_status(name: str, spec: McpServerSpec, config_hash: str, safe_name: str) -> RuntimeStatus:
    return RuntimeStatus(
        name=name,
        safe_name=safe_name,
        transport=str(spec.effective_transport),
        config_hash=config_hash,
        phase=Phase.STOPPED,
    )


class Supervisor:
    """Runs, watches and answers for MCP servers (see the module docstring)."""

    def __init__(
        self,
        *,
        settings: RuntimeSettings | None = None,
        on_event: Callable[[RuntimeEvent], None] | None = None,
    ) -> None:
        self.settings = settings or RuntimeSettings()
        self.starts = StartSlots(self.settings.max_starting or default_start_slots())
        """The start slots every runtime of this supervisor shares (``runtimes.process.starts``)."""
        self._on_event = on_event
        self._runtimes: dict[str, ServerRuntime] = {}
        self._locks: dict[str, anyio.Lock] = {}
        self._changed = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self._bridge_scope: anyio.CancelScope | None = None
        self._proxy: ProxyHandle | None = None
        self.tool_gate: ToolGate | None = None
        """Holds hosted servers' gated tool calls (``toolApproval``); None refuses them."""

    async def __aenter__(self) -> Supervisor:
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        try:
            await self.aclose()
        finally:
            tg, self._tg = self._tg, None
            if tg is not None:
                tg.cancel_scope.cancel()
                await tg.__aexit__(*exc_info)

    # -- desired state -------------------------------------------------------------------
    async def ensure(
        self,
        name: str,
        spec: McpServerSpec,
        *,
        config_hash: str,
        base_dir: Path,
        safe_name: str | None = None,
        resolved: ResolvedSecrets | None = None,
    ) -> RuntimeStatus:
        """Make ``name`` run ``spec``: start it, or restart it when ``config_hash`` changed.

        The same hash again is a no-op (apart from a new ``safe_name``), unless the runtime
        gave up, in which case it starts afresh. A disabled spec is removed. ``safe_name``
        is the server's sanitized name over the whole declaration (``clawplane.naming.
        assign_server_names``); without it the name is sanitized on its own. Returns at
        once, with the runtime starting in the background. ``resolved`` holds the values of
        the spec's secret references that ``config_hash`` was computed from (every start of
        this runtime uses them); without it they are resolved at each start.
        """
        safe = safe_name or sanitize_fragment(name, fallback=SERVER_NAME_FALLBACK, max_chars=SERVER_NAME_MAX)
        async with self._lock(name):
            current = self._runtimes.get(name)
            if (
                current is not None
                and current.config_hash == config_hash
                and current.phase is not Phase.FAILED
            ):
                current.rename(safe)
                return current.status()
            if current is not None:
                await self._stop(name)
            if not spec.enabled:
                return _stopped_status(name, spec, config_hash, safe)
            runtime = ServerRuntime(
                name,
                spec,
                config_hash=config_hash,
                base_dir=base_dir,
                safe_name=safe,
                settings=self.settings,
                emit=self._emit,
                on_touch=self._touch,
                resolved=resolved,
                tool_gate=lambda: self.tool_gate,
                starts=self.starts,
            )
            self._runtimes[name] = runtime
            self._require_tg().start_soon(runtime.run)
            self._touch()
            return runtime.status()

    async def remove(self, name: str) -> None:
        """Stop ``name`` and tear its process tree down; unknown names are ignored."""
        async with self._lock(name):
            await self._stop(name)

    async def aclose(self) -> None:
        """Stop the bridge and every runtime (concurrently); bounded by the teardown settings."""
        if self._bridge_scope is not None:
            self._bridge_scope.cancel()
            self._bridge_scope = None
            self._proxy = None
        async with anyio.create_task_group() as tg:
            for name in list(self._runtimes):
                tg.start_soon(self.remove, name)

    # -- observing -----------------------------------------------------------------------
    def names(self) -> list[str]:
        """Names of the runtimes, in the order they were ensured."""
        return list(self._runtimes)

    def status(self, name: str) -> RuntimeStatus:
        """The status of ``name``.

        Raises:
            UnknownServerError: No runtime by that name.
        """
        return self._get(name).status()

    def statuses(self) -> dict[str, RuntimeStatus]:
        """The status of every runtime."""
        return {name: runtime.status() for name, runtime in self._runtimes.items()}

    def stderr(self, name: str) -> list[str]:
        """The recent stderr lines of a stdio server (capped and redacted)."""
        return self._get(name).stderr.lines()

    async def wait_until(
        self, name: str, predicate: Callable[[RuntimeStatus], bool], *, timeout: float | None = None
    ) -> RuntimeStatus:
        """Wait until ``predicate(status(name))`` holds and return that status.

        Raises:
            TimeoutError: ``timeout`` seconds passed first.
            UnknownServerError: ``name`` is not (or no longer) a runtime.
        """
        with anyio.fail_after(timeout):
            while True:
                status = self.status(name)
                if predicate(status):
                    return status
                await self._changed.wait()

    def change_event(self) -> anyio.Event:
        """An event set at the next change of any runtime (status, tools) or at ``touch``."""
        return self._changed

    def touch(self) -> None:
        """Wake whoever waits for a change (something the runtimes' consumers depend on changed)."""
        self._touch()

    async def wait_settled(self, name: str, *, timeout: float | None = None) -> RuntimeStatus:
        """Wait until the first start attempt of ``name`` is over (ready, backing off or failed).

        ``timeout`` counts from when that start got its slot (``runtimes.process.starts``): waiting for
        the servers ahead of it is not its own slowness.
        """
        runtime = self._get(name)
        await runtime.admitted.wait()

        def settled(status: RuntimeStatus) -> bool:
            return status.phase in (Phase.READY, Phase.BACKOFF, Phase.FAILED) and runtime.attempts > 0

        return await self.wait_until(name, settled, timeout=timeout)

    # -- tools ---------------------------------------------------------------------------
    def catalog(
        self, server_names: Iterable[str] | None = None, *, reserved: Iterable[str] = ()
    ) -> list[ToolEntry]:
        """The merged, prefixed tool catalog over ``server_names`` (default: every runtime).

        A server that has listed its tools once keeps them in the catalog while it
        restarts, so catalogs do not flap. ``reserved`` holds names the agent already uses
        (built-in tools); colliding MCP tools get ``-2``, ``-3``, … suffixes.
        """
        return merge_catalog(self.surfaces(server_names), reserved=reserved)

    def surfaces(self, server_names: Iterable[str] | None = None) -> list[ServerTools]:
        """The last tool listings of ``server_names`` (default: every runtime) that have listed once."""
        names = self.names() if server_names is None else list(server_names)
        return [self._runtimes[n].tools for n in names if n in self._runtimes and self._runtimes[n].listed]

    async def call_tool(
        self, server: str, tool: str, arguments: Mapping[str, Any] | None = None
    ) -> ToolResult:
        """Call ``tool`` (its raw MCP name) on ``server``.

        Raises:
            UnknownServerError: No runtime by that name.
            ServerUnavailableError: Not connected, or paused (``ServerPausedError``).
            RequestFailedError: The call failed or timed out.
        """
        return await self._get(server).call_tool(tool, arguments)

    async def invoke(self, entry: ToolEntry, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call a catalog entry: a tool, or a resources/prompts utility entry."""
        runtime = self._get(entry.server)
        if entry.kind is ToolKind.TOOL:
            return await runtime.call_tool(entry.tool, arguments)
        return await runtime.run_utility(entry.kind, arguments)

    # -- exposure ------------------------------------------------------------------------
    async def expose(
        self,
        guard: RequestGuard,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        default: str | None = None,
        sock: socket.socket | None = None,
    ) -> Endpoint:
        """Serve hosted stdio servers over streamable HTTP at ``endpoint.url(name)``.

        ``guard`` checks Host/Origin and tokens; ``sock`` is an already bound socket (else
        ``host``/``port`` are bound). Idempotent: a second call returns the running endpoint.

        Raises:
            PortInUseError: ``port`` is taken.
            OSError: The address cannot be bound.
        """
        if self._proxy is None:
            sock = sock or bind(host, port)
            self._proxy = await self._require_tg().start(self._run_proxy, guard, sock, default)
        return self._proxy.endpoint

    @property
    def endpoint(self) -> Endpoint | None:
        """Where hosted servers are served, once ``expose`` ran."""
        return self._proxy.endpoint if self._proxy is not None else None

    def mount(self, prefix: str, route: Route) -> None:
        """Serve ``route`` at path ``prefix`` of the hosted endpoint (after ``expose``), behind its guard."""
        if self._proxy is None:
            raise RuntimeError("expose the hosted endpoint before mounting routes on it")
        self._proxy.app.routes[prefix] = route

    def wrap_endpoint(self, middleware: Callable[[ASGIApp], ASGIApp]) -> None:
        """Put ``middleware`` in front of the hosted endpoint's requests (after ``expose``)."""
        if self._proxy is None:
            raise RuntimeError("expose the hosted endpoint before wrapping it")
        app = self._proxy.app
        app.asgi = middleware(app.asgi)  # type: ignore[arg-type]

    def unmount(self, prefix: str) -> None:
        """Stop serving what was mounted at ``prefix``."""
        if self._proxy is not None:
            self._proxy.app.routes.pop(prefix, None)

    def session_counts(self) -> dict[str, int]:
        """Client sessions the hosted endpoint holds, by server."""
        return self._proxy.app.session_counts() if self._proxy is not None else {}

    async def _run_proxy(
        self,
        guard: RequestGuard,
        sock: socket.socket,
        default: str | None,
        *,
        task_status: anyio.abc.TaskStatus[ProxyHandle] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        with anyio.CancelScope() as scope:
            self._bridge_scope = scope
            async with serve_proxy(self, guard, sock, default=default) as handle:
                task_status.started(handle)
                await anyio.sleep_forever()

    def server_tools(self, name: str) -> ServerTools:
        """The tools ``name`` listed last (exposed ones, and how many were filtered)."""
        return self._get(name).tools

    def hosted(self, name: str) -> ServerRuntime | None:
        """The hosted runtime called ``name`` (for the proxy), or None."""
        runtime = self._runtimes.get(name)
        return runtime if runtime is not None and runtime.hosted else None

    def serve_pages(self, app: ASGIApp | None) -> None:
        """Serve ``app`` at ``/ui`` of the hosted endpoint (None: stop); needs ``expose`` first."""
        if self._proxy is None:
            raise RuntimeError("expose the hosted endpoint before serving pages on it")
        self._proxy.app.pages = app

    def health(self) -> dict[str, str]:
        """The phase of every hosted runtime (for the bridge's health endpoint)."""
        return {name: r.phase.value for name, r in self._runtimes.items() if r.hosted}

    # -- internals -----------------------------------------------------------------------
    def _get(self, name: str) -> ServerRuntime:
        runtime = self._runtimes.get(name)
        if runtime is None:
            raise UnknownServerError(f'no MCP server "{name}" is running')
        return runtime

    def _lock(self, name: str) -> anyio.Lock:
        return self._locks.setdefault(name, anyio.Lock())

    def _require_tg(self) -> anyio.abc.TaskGroup:
        if self._tg is None:
            raise RuntimeError(
                "use the Supervisor as an async context manager (async with Supervisor() as s)"
            )
        return self._tg

    async def _stop(self, name: str) -> None:
        runtime = self._runtimes.get(name)
        if runtime is None:
            return
        await runtime.stop()
        if self._runtimes.get(name) is runtime:
            del self._runtimes[name]
        self._touch()

    def _emit(self, event: RuntimeEvent) -> None:
        if self._on_event is not None:
            self._on_event(event)

    def _touch(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()
