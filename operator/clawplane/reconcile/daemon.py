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
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

import anyio
from starlette.types import ASGIApp

from clawplane._utils.changefeed import ChangeFeed
from clawplane.approvals import ApprovalError, ToolCallApprovals, mark_applied
from clawplane.desired import DesiredState
from clawplane.planning import Plan
from clawplane.reconcile import extensions
from clawplane.reconcile.agentendpoint import serve_agent_endpoints
from clawplane.reconcile.applier import ApplyContext, PlanRefusedError, apply_plan, check_plan
from clawplane.reconcile.endpoint import bind_endpoint
from clawplane.reconcile.engine import Engine, InvalidFolderError
from clawplane.reconcile.extensions import FileChanges, SupervisorContext, SupervisorService
from clawplane.reconcile.holding import hold_back
from clawplane.reconcile.localbackend import LocalBackend, open_local_backend
from clawplane.reconcile.loop import DEFAULT_RESYNC_S, LoopState, ReconcileLoop
from clawplane.reconcile.metrics import LoopMetrics, MetricsServer
from clawplane.reconcile.modelproviders import resolver_reader
from clawplane.reconcile.oversight import Oversight
from clawplane.reconcile.processes import (
    Generation,
    StateLedger,
    claim_generation,
    current_generation,
    end_adopted_orphans,
    end_leftovers,
    mark_runtimes_stopped,
    release_generation,
)
from clawplane.runtimes import EventKind, PortInUseError, RequestGuard, RuntimeEvent, RuntimeSettings
from clawplane.runtimes.childwatch import raise_descriptor_limit, watch_children_with_pidfds
from clawplane.runtimes.process import use_ledger
from clawplane.runtimes.proxy import is_loopback
from clawplane.state import FolderLock, StateDB, StateError, store, tokens, utcnow
from clawplane.workspace import (
    Apply,
    Ping,
    ProtocolError,
    Respond,
    RotateTokens,
    Runtimes,
    Shutdown,
    SupervisorInfo,
    Workspace,
    decode,
    serve_control,
    write_info,
)

Emit = Callable[[dict[str, Any]], Awaitable[None]]
log = logging.getLogger(__name__)


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
    services: tuple[SupervisorService, ...] | None = None
    """What else runs on the endpoint (None: what the entry point provided, ``extensions``)."""
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


def live_reports(backend: LocalBackend) -> dict[str, dict[str, Any]]:
    """What each runtime of ``backend`` reports right now, JSON-ready (texts already redacted)."""
    reports = {name: backend.report(name) for name in backend.supervisor.names()}
    return {name: asdict(r) for name, r in reports.items() if r is not None}


class _Handler:
    def __init__(
        self,
        ws: Workspace,
        db: StateDB,
        backend: LocalBackend,
        shutdown: anyio.Event,
        cleaned: anyio.Event,
        oversight: Oversight,
    ) -> None:
        self.ws, self.db, self.backend, self.shutdown, self.cleaned = ws, db, backend, shutdown, cleaned
        self.oversight = oversight
        self.engine = Engine(ws, watch=True)  # it re-plans on every change: spare the stats
        self.busy = anyio.Lock()
        self.loop = ReconcileLoop(ws, db, backend, self.engine, self.busy, oversight=oversight)
        self.watching = False

    async def __call__(self, message: dict[str, Any], emit: Emit) -> dict[str, Any]:
        try:
            request = decode(message)
        except ProtocolError as exc:
            return {"ok": False, "error": str(exc)}
        match request:
            case Ping():
                return self._ping()
            case Runtimes():  # live phase, pid, restarts, error and stderr of every hosted server
                return {"ok": True, "runtimes": live_reports(self.backend)}
            case Shutdown():
                return {"ok": True}  # the shutdown itself happens after this reply (see after_reply)
            case RotateTokens():
                return await self._rotate(request)
            case Respond():
                return self._respond(request)
            case Apply():
                return await self._apply_alone(request, emit)

    def _ping(self) -> dict[str, Any]:
        reply: dict[str, Any] = {
            "ok": True,
            "pid": os.getpid(),
            "endpoint": self.endpoint(),
            "watching": self.watching,
            "cleaning": not self.cleaned.is_set(),
            "degraded": self.loop.state.degraded,
        }
        if self.watching:
            reply["loop"] = self.loop.state.to_dict()
        return reply

    async def _rotate(self, request: RotateTokens) -> dict[str, Any]:
        from clawplane.reconcile.tokenops import rotate

        async with self.busy:
            result = rotate(self.engine, self.db, request.consumers)
            self.backend.refresh_access(self.db)
            return result.to_dict()

    def endpoint(self) -> str:
        return self.backend.endpoint.base_url if self.backend.endpoint else ""

    def _respond(self, request: Respond) -> dict[str, Any]:
        try:
            done = self.oversight.respond(request.id, request.decision, by=request.by, reason=request.reason)
        except (ApprovalError, ValueError) as exc:
            return {"ok": False, "error": str(exc)}
        return {"ok": True, "approval": done.to_dict()}

    async def _apply_alone(self, request: Apply, emit: Emit) -> dict[str, Any]:
        """One apply at a time, after what a previous supervisor left was stopped."""
        if self.busy.locked():
            return {"ok": False, "error": "another apply is running for this folder; try again when it ends"}
        async with self.busy:
            if not self.cleaned.is_set():
                await emit({"event": "waiting", "message": "stopping what a previous supervisor left"})
                await self.cleaned.wait()
            return await self._apply(request, emit)

    async def _apply(self, request: Apply, emit: Emit) -> dict[str, Any]:
        # The plan was made with the values of the applying shell; so is the apply (memory only).
        self.engine.resolver.supply(request.env)
        try:
            self.loop.check_database()
            return await self._apply_plan(request, emit)
        except StateError as exc:
            self.loop.state.degrade("state", str(exc))
            return {"ok": False, "error": str(exc)}

    async def _apply_plan(self, request: Apply, emit: Emit) -> dict[str, Any]:
        try:
            plan = Plan.model_validate(request.plan)
            planned = self.engine.plan(self.db)
        except InvalidFolderError as exc:
            return {"ok": False, "error": f"the folder does not validate ({exc}); nothing was changed"}
        # Someone waiting at `clawplane apply` wants each server Ready or a reason why not.
        wait, allow_mass_delete = request.wait, request.allow_mass_delete
        ctx = self._context(planned.desired, wait)
        try:
            check_plan(plan, ctx, allow_mass_delete=allow_mass_delete)
        except PlanRefusedError as exc:
            return {"ok": False, "refused": True, "error": str(exc)}
        held = hold_back(
            self.engine, self.db, planned, self.oversight.approvals, self.oversight.sources,
            requested_by=f"apply:{request.by}", approve_as=request.approve_as,
        )  # fmt: skip
        if held.decision.waiting:  # carry out the plan without what waits for an approval
            plan, ctx = held.planned.plan, self._context(held.planned.desired, wait)
        try:
            result = await apply_plan(plan, ctx, allow_mass_delete=allow_mass_delete, emit=emit)
        except PlanRefusedError as exc:
            return {"ok": False, "refused": True, "error": str(exc)}
        self.oversight.sources.remember(held.planned.validation)
        released = {h.change.key for h in held.decision.released}
        if released and all(result.results.get(key) == "ok" for key in released):
            mark_applied(self.oversight.approvals, held.decision)
        reply = result.to_dict()
        request_ = held.decision.request
        if request_ is not None:
            reply["held"] = {"approval": request_.to_dict(), "new": held.decision.new}
        return reply

    def _context(self, desired: DesiredState, wait: bool) -> ApplyContext:
        return ApplyContext(
            desired, self.db, self.backend, self.engine.renderer, self.ws.out_dir,
            require_ready=wait, restart_crashed=wait,
            on_outputs=lambda applied: self.backend.outputs_written(self.db, applied),
            secret_reader=resolver_reader(self.engine.resolver),
        )  # fmt: skip


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
    from clawplane.reconcile.watch import watch_folder

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
                settings=options.settings,
                on_event=on_event,
            )
            async with backend_cm as backend:
                backend.refresh_access(db)
                # Gated tool calls on the hosted endpoint wait in the folder's approval queue.
                backend.supervisor.tool_gate = ToolCallApprovals(oversight.approvals)
                handler = _Handler(ws, db, backend, shutdown, cleaned, oversight)
                loop = handler.loop
                loop.metrics, loop.resync_interval = metrics, options.resync_interval
                loop.on_reopen, loop.on_pass = ledger.record_all, ledger.retry
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
                services = extensions.provided() if options.services is None else options.services
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
        with contextlib.suppress(OSError):
            ws.pidfile.unlink()
        db.close()
        lock.release()
