"""The folder supervisor behind ``clawplane run``: runtimes, their HTTP endpoint, and applies.

One supervisor per folder (a lock in the state directory keeps it single). It owns
the hosted MCP runtimes and the loopback endpoint that exposes them, serves the
control socket (``workspace.protocol``), and on exit tears every runtime
down and records them as stopped. Every process it spawns is recorded in the state
database the moment it exists (``processes.StateLedger``), and carries this supervisor's
mark in its environment. At start, before its control socket answers or it plans, it ends
what supervisors that died left behind (``end_leftovers``: in parallel, process trees
included, and only processes proven theirs), so that the first plan sees them stopped.
Apply rows a dead supervisor left open are closed as ``interrupted``. A port already in
use is an error that names it.

With ``watch`` on (``clawplane run``), it also runs the GitOps loop (``loop.py``): an
initial reconcile, one per debounced batch of folder changes, one per runtime event
that matters, and a level-based resync every ``resync_interval`` seconds. Loop passes
and control-socket applies share one lock, so one reconcile runs at a time. A health
and metrics endpoint (``metrics.py``) runs on a loopback port unless disabled.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import anyio
from starlette.types import ASGIApp

from clawplane._utils.changefeed import ChangeFeed
from clawplane.approvals import ToolCallApprovals
from clawplane.desired import DesiredState
from clawplane.reconcile.agents.endpoint import serve_agent_endpoints
from clawplane.reconcile.localbackend import LocalBackend, open_local_backend
from clawplane.reconcile.loop import DEFAULT_RESYNC_S, LoopState, ReconcileLoop
from clawplane.reconcile.metrics import LoopMetrics, MetricsServer
from clawplane.reconcile.oversight import Oversight
from clawplane.runtimes import EventKind, PortInUseError, RequestGuard, RuntimeEvent, RuntimeSettings
from clawplane.runtimes.process import raise_descriptor_limit, use_ledger, watch_children_with_pidfds
from clawplane.runtimes.proxy import is_loopback
from clawplane.state import FolderLock, StateDB, StateError, store, tokens, utcnow
from clawplane.supervisor.audittrail import AuditTrail
from clawplane.supervisor.endpoint import bind_endpoint
from clawplane.supervisor.extensions import FileChanges, SupervisorContext, SupervisorService
from clawplane.supervisor.handler import ControlHandler
from clawplane.supervisor.otlpmetrics import metrics_follower
from clawplane.supervisor.processes import (
    Generation,
    StateLedger,
    claim_generation,
    current_generation,
    end_adopted_orphans,
    end_leftovers,
    mark_runtimes_stopped,
    release_generation,
)
from clawplane.supervisor.traces import tracing_follower
from clawplane.telemetry import CallMetrics, CallSeries, CallSpans, CallTelemetry, MetricExporter, Tracing
from clawplane.workspace import (
    ProtocolError,
    Shutdown,
    SupervisorInfo,
    Workspace,
    decode,
    serve_control,
    write_info,
)

Emit = Callable[[dict[str, Any]], Awaitable[None]]
log = logging.getLogger("clawplane.reconcile.daemon")  # the name log readers know it by


@dataclass
class SupervisorOptions:
    """How the supervisor listens and runs servers."""

    host: str | None = None
    """Address of the hosted endpoint (None: the Gateway's ``spec.endpoint.host``, else 127.0.0.1)."""
    port: int = 0
    """Port of the hosted endpoint (0: the Gateway's, else the one used last time, else any free one)."""
    settings: RuntimeSettings | None = None
    watch: bool = False
    """Run the GitOps loop (initial reconcile, folder watch, runtime events, resync)."""
    resync_interval: float = DEFAULT_RESYNC_S
    metrics_port: int | None = 0
    """Port of ``/healthz``, ``/readyz``, ``/metrics`` on ``host`` (0 = any free one, None = off)."""
    services: tuple[SupervisorService, ...] = ()
    """What else runs on the endpoint, passed by the entry point (``clawplane run``: the control plane)."""
    pages: Callable[[PagesContext], ASGIApp] | None = None
    """Makes the app served at ``/ui`` of the hosted endpoint (the dashboard; None: no pages)."""


@dataclass(frozen=True)
class PagesContext:
    """What the pages at ``/ui`` read and answer through: the folder, its state, queues and runtimes."""

    ws: Workspace
    db: StateDB
    oversight: Oversight
    backend: LocalBackend
    shutdown: anyio.Event
    """Set when the supervisor stops: long-lived streams end then."""
    loop: LoopState | None = None
    """The reconcile loop's state as it is now (``loop.json`` is written only after each pass)."""


def _each(*follow: Callable[[DesiredState], None]) -> Callable[[DesiredState], None]:
    """Calls every one of ``follow`` with a pass's desired state."""

    def each(desired: DesiredState) -> None:
        for one in follow:
            one(desired)

    return each


async def _record_surfaces(loop: ReconcileLoop, busy: anyio.Lock, changed: list[anyio.Event]) -> None:
    """Without the loop, still record a server's new tool surface, so `plan` reports the drift."""
    while True:
        await changed[0].wait()
        changed[0] = anyio.Event()
        async with busy:
            loop.sync_runtimes()


async def _watch_signals(received: AsyncIterator[int], shutdown: anyio.Event) -> None:
    async for _ in received:
        shutdown.set()
        return


async def _watch_folder(
    ws: Workspace, changes: FileChanges, shutdown: anyio.Event, feed: ChangeFeed | None
) -> None:
    from clawplane.supervisor.watch import watch_folder

    # On the engine's change feed: one inotify descriptor for the watch and the engine's caches.
    await watch_folder(ws.folder, changes, ignore=(ws.state_dir, ws.out_dir), stop=shutdown, feed=feed)


async def _end_leftovers(db: StateDB, cleaned: anyio.Event, previous: list[Generation]) -> None:
    started = time.monotonic()
    try:
        ended = await end_leftovers(db, previous=previous)  # a SIGTERM meanwhile waits for it
    except Exception:  # a broken state file must not keep the supervisor from serving
        log.exception("could not end the processes a previous supervisor left")
        ended = []
    finally:
        cleaned.set()
    if ended:
        log.info(
            "stopped %d leftover runtime(s) of a previous supervisor in %.1fs: %s",
            len(ended),
            time.monotonic() - started,
            ", ".join(ended),
        )


def _listen_error(exc: BaseException, what: str, host: str, port: int, flag: str) -> StateError | None:
    """A clear error for a port that cannot be bound, found inside exception groups too."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _listen_error(inner, what, host, port, flag)) is not None:
                return found
        return None
    if isinstance(exc, PortInUseError):
        return StateError(
            f"cannot listen on {exc.host}:{exc.port} for {what}: the port is already in use; "
            f"choose another {flag} (0 picks a free port) or stop what uses it"
        )
    if isinstance(exc, OSError) and exc.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
        return StateError(
            f"cannot listen on {host}:{port} for {what}: {exc.strerror}; "
            f"choose another {flag} (0 picks a free port) or stop what uses it"
        )
    return None


async def run_supervisor(
    ws: Workspace,
    options: SupervisorOptions | None = None,
    *,
    on_ready: Callable[[SupervisorInfo], None] | None = None,
) -> None:
    """Run the folder's supervisor until SIGTERM/SIGINT or a ``shutdown`` request.

    Raises:
        StateError: The state directory cannot be used, or a port is taken (the message names it).
    """
    options = options or SupervisorOptions()
    # This process runs one loop for its whole life: child exits arrive there as pidfds (no
    # thread per server), and the soft descriptor limit goes up to the hard one.
    watch_children_with_pidfds()
    raise_descriptor_limit()
    lock = FolderLock(ws.state_dir, "supervisor.lock")
    lock.acquire()
    try:
        await _supervise(ws, options, lock, on_ready)
    except StateError:
        raise
    except BaseException as exc:
        # Task groups wrap what went wrong; a user's error (a port, the disk) is shown bare.
        found = _state_error(exc) or _listen_error(
            exc, "hosted MCP servers", options.host or "127.0.0.1", options.port, "--port"
        )
        if found is not None:
            raise found from None
        raise


def _state_error(exc: BaseException) -> StateError | None:
    if isinstance(exc, StateError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _state_error(inner)) is not None:
                return found
    return None


async def _supervise(
    ws: Workspace,
    options: SupervisorOptions,
    lock: FolderLock,
    on_ready: Callable[[SupervisorInfo], None] | None,
) -> None:
    try:
        db = StateDB.open(ws.state_dir)
    except BaseException:
        lock.release()
        raise
    if db.recovered:
        log.warning("%s", db.recovered)
    interrupted = store.audit_close_interrupted(
        db, "the supervisor stopped before this apply finished (killed, or the machine went down)"
    )
    if interrupted:
        log.warning("closed %d apply record(s) a previous supervisor left open as interrupted", interrupted)
    shutdown, cleaned = anyio.Event(), anyio.Event()
    generation = current_generation()
    ledger = StateLedger(db, generation=generation)
    previous = claim_generation(db, generation)
    oversight = Oversight.open(db)

    def after_reply(message: dict[str, Any]) -> None:
        with contextlib.suppress(ProtocolError):
            if isinstance(decode(message), Shutdown):
                shutdown.set()

    metrics = LoopMetrics()
    # Every request the endpoint carries: counted on /metrics, charted on the dashboard, and
    # traced once a pass finds trace export configured...
    tracing = Tracing()
    telemetry = CallTelemetry([CallMetrics(metrics.registry), CallSeries(), CallSpans(tracing)])
    # ... and every tool call kept in the audit trail, written off the event loop.
    trail = AuditTrail(ws.state_dir, telemetry, tracing=tracing)
    # Everything /metrics serves is also pushed over OTLP once a pass finds that configured.
    metric_export = MetricExporter(metrics.registry)
    loop_ref: list[ReconcileLoop] = []

    surface_changed = [anyio.Event()]

    def on_event(event: RuntimeEvent) -> None:
        oversight.runtime_event(event)
        if loop_ref:
            loop_ref[0].on_runtime_event(event)
        elif event.kind is EventKind.TOOLS_CHANGED:
            surface_changed[0].set()

    server: MetricsServer | None = None
    try:
        # Signals stay captured until teardown is over, so a second SIGTERM cannot orphan runtimes.
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received, use_ledger(ledger):
            # Before anyone can reach this supervisor: `apply` plans as soon as it answers, and a
            # plan made while a dead supervisor's servers still run would find nothing to do.
            await _end_leftovers(db, cleaned, previous)
            tokens.ensure_tokens(db, [tokens.CLI, tokens.READER])
            choice = bind_endpoint(
                ws.folder,
                db,
                host=options.host or "127.0.0.1",
                port=options.port,
                host_given=options.host is not None,
            )
            if not is_loopback(choice.host):
                log.warning(
                    "hosted MCP servers are served on %s: anyone who can reach it and holds a token can "
                    "call their tools; prefer 127.0.0.1",
                    choice.host,
                )
            backend_cm = open_local_backend(
                host=choice.host,
                port=choice.port,
                sock=choice.sock,
                # Remote auth: oauth servers use the logins stored beside the state database.
                settings=replace(
                    options.settings or RuntimeSettings(),
                    state_dir=ws.state_dir,
                    folder=ws.folder,
                    telemetry=telemetry,
                ),
                on_event=on_event,
            )
            trail.start(db)
            async with backend_cm as backend:
                backend.refresh_access(db)
                backend.on_applied.append(trail.follow)
                # Gated tool calls on the hosted endpoint wait in the folder's approval queue.
                backend.supervisor.tool_gate = ToolCallApprovals(oversight.approvals)
                handler = ControlHandler(ws, db, backend, shutdown, cleaned, oversight)
                loop = handler.loop
                loop.metrics, loop.resync_interval = metrics, options.resync_interval
                loop.on_reopen, loop.on_pass = ledger.record_all, ledger.retry
                loop.tracing = tracing
                loop.on_desired = _each(
                    tracing_follower(tracing, handler.engine.resolver),
                    metrics_follower(metric_export, handler.engine.resolver),
                    trail.retrace,  # after the traces: the audit's log records carry their headers
                )
                ledger.on_error = lambda message: loop.state.degrade("state", message)
                if options.watch:
                    handler.watching = True
                    loop_ref.append(loop)
                    oversight.on_answer = lambda _answered: loop.trigger("approval")
                if options.pages is not None:
                    pages = PagesContext(ws, db, oversight, backend, shutdown, loop.state)
                    backend.supervisor.serve_pages(options.pages(pages))
                metrics_url = ""
                if options.metrics_port is not None:
                    server = MetricsServer(
                        metrics,
                        guard=RequestGuard(choice.host, backend.tokens),
                        healthy=lambda: not shutdown.is_set() and (loop.state.watching or not options.watch),
                        ready=lambda: (loop.state.ready or not options.watch) and not loop.state.degraded,
                    )
                    try:
                        metrics_url = server.start(choice.host, options.metrics_port)
                    except OSError as exc:
                        found = _listen_error(
                            exc, "health and metrics", choice.host, options.metrics_port, "--metrics-port"
                        )
                        raise found or exc from None
                services = options.services
                context = SupervisorContext(ws, db, oversight, backend)
                if options.watch:
                    context.on_files_changed(loop.on_files_changed)
                # Services close before the task group they were opened in (their scopes nest in it).
                async with anyio.create_task_group() as tg, contextlib.AsyncExitStack() as running:
                    agents = serve_agent_endpoints(backend.supervisor, backend.agents)
                    await running.enter_async_context(agents)
                    for service in services:
                        await running.enter_async_context(service(context))
                    await tg.start(partial(serve_control, ws.socket_path, handler, after_reply=after_reply))
                    info = SupervisorInfo.for_this_process(
                        str(ws.socket_path), handler.endpoint(), utcnow(), metrics_url
                    )
                    write_info(ws, info)
                    tg.start_soon(_watch_signals, received, shutdown)
                    if context.changes.listening:  # one watch for the loop and every service
                        tg.start_soon(_watch_folder, ws, context.changes, shutdown, handler.engine.feed)
                    if options.watch:
                        tg.start_soon(loop.run, cleaned)
                    else:
                        tg.start_soon(_record_surfaces, loop, handler.busy, surface_changed)
                    if on_ready is not None:
                        on_ready(info)
                    await shutdown.wait()
                    tg.cancel_scope.cancel()
                loop.sync_runtimes()  # last counters and errors, for `status` once this is gone
                loop_ref.clear()
                if server is not None:
                    server.stop()
            # Leaving the backend tore every runtime down; record that, and end what they left.
            end_adopted_orphans(set())
            mark_runtimes_stopped(db)
            with contextlib.suppress(StateError):  # kept, it only costs the next start a search
                release_generation(db, generation)
    finally:
        if server is not None:
            server.stop()
        trail.close()  # after the runtimes: the calls they ended on the way out are kept too
        tracing.shutdown()  # the last spans go out (bounded by the exporter's timeout)
        metric_export.shutdown()  # the last counts go out (bounded by the export's timeout)
        with contextlib.suppress(OSError):
            ws.pidfile.unlink()
        db.close()
        lock.release()
