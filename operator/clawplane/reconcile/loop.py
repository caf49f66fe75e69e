"""The GitOps loop behind ``clawplane run``: reconcile on start, on change, on events, on a timer.

Level-based: every pass re-reads the folder and the state database and never trusts what
woke it. A pass first folds the live state of the hosted runtimes into the state database
(phase, pid, restarts, the tool surface they now report), then plans and applies with the
same engine and applier as ``clawplane apply``. Triggers arriving during a pass coalesce
into one further pass. A folder that stops validating changes nothing: the last good state
keeps running, the diagnostics are logged and exposed, and the next valid save converges.
A plan that deletes most or all resources is never applied automatically; it is reported.

A resource that vanishes from the folder is deleted only if it is still absent once the
folder has been quiet for ``DELETE_SETTLE_S`` (a file being written, cut at a ``---``,
must not delete what its second half declares). Failing to write ``loop.json``, the state
database or a rendered file never stops the loop or a server: the failure is logged, kept
in ``degraded`` (``loop.json``, ``/readyz``, ``/metrics``, ``ping``) and retried with a
backoff until it clears. A state database deleted or replaced under the running supervisor
is reopened, and the running processes are recorded in it again.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from clawplane.approvals import HoldDecision, mark_applied
from clawplane.desired import DesiredState
from clawplane.events import EventType
from clawplane.models import McpServer
from clawplane.reconcile.applier import ApplyContext, PlanRefusedError, apply_plan, record_resource
from clawplane.reconcile.engine import Engine, InvalidFolderError
from clawplane.reconcile.holding import hold_back
from clawplane.reconcile.localbackend import LocalBackend
from clawplane.reconcile.logs import reconcile_context
from clawplane.reconcile.metrics import LoopMetrics
from clawplane.reconcile.modelproviders import resolver_reader
from clawplane.reconcile.outcome import PassOutcome
from clawplane.reconcile.oversight import Oversight
from clawplane.reconcile.runtimesync import sync_runtimes
from clawplane.runtimes import EventKind, RuntimeEvent
from clawplane.secrets import redact_data
from clawplane.state import StateDB, StateError, store, utcnow
from clawplane.telemetry import PassSpan, Tracing
from clawplane.workspace import LOOP_STATUS_FILE, Workspace, write_loop_status

log = logging.getLogger("clawplane.reconcile")

DEFAULT_RESYNC_S = 30.0
DELETE_SETTLE_S = 2.0
"""Quiet time after the last file change before a vanished resource is deleted."""
RETRY_MIN_S, RETRY_MAX_S = 1.0, 30.0
_WAKE_EVENTS = frozenset(
    {
        EventKind.READY,
        EventKind.CRASHED,
        EventKind.RESTART_SCHEDULED,
        EventKind.GAVE_UP,
        EventKind.TOOLS_CHANGED,
        EventKind.PAUSED,
        EventKind.START_FAILED,
    }
)


@dataclass
class LoopState:
    """What the loop last did (written to ``.clawplane/loop.json`` and served in ``ping``)."""

    watching: bool = False
    ready: bool = False
    folder_valid: bool | None = None
    diagnostics: list[str] = field(default_factory=list)
    reconciles: int = 0
    last_id: str | None = None
    last_result: PassOutcome | None = None
    last_reason: str | None = None
    last_at: str | None = None
    last_success_at: str | None = None
    refused: str | None = None
    errors: dict[str, str] = field(default_factory=dict)
    held: dict[str, Any] | None = None
    """The approval request the plan's held actions wait on, and those actions."""
    degraded: dict[str, str] = field(default_factory=dict)
    """What cannot be written right now (``loop.json``, ``state``, ``outputs``), and why."""
    notices: list[str] = field(default_factory=list)
    """Things the supervisor repaired that a user should know about (latest last)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "watching": self.watching,
            "ready": self.ready,
            "folderValid": self.folder_valid,
            "diagnostics": self.diagnostics,
            "reconciles": self.reconciles,
            "lastReconcile": {
                "id": self.last_id,
                "result": self.last_result,
                "reason": self.last_reason,
                "at": self.last_at,
            },
            "lastSuccessAt": self.last_success_at,
            "refused": self.refused,
            "errors": self.errors,
            "held": self.held,
            "degraded": self.degraded,
            "notices": self.notices[-10:],
        }

    def degrade(self, what: str, why: str | None) -> None:
        """Record (or with None, clear) a write that is failing."""
        if why is None:
            if self.degraded.pop(what, None) is not None:
                log.info("%s can be written again", what)
        else:
            if self.degraded.get(what) != why:
                log.error("cannot write %s: %s (servers keep running; retrying)", what, why)
            self.degraded[what] = why


class ReconcileLoop:
    """Runs reconcile passes for one folder, one at a time (under ``lock``)."""

    def __init__(
        self,
        ws: Workspace,
        db: StateDB,
        backend: LocalBackend,
        engine: Engine,
        lock: anyio.Lock,
        *,
        metrics: LoopMetrics | None = None,
        resync_interval: float = DEFAULT_RESYNC_S,
        oversight: Oversight | None = None,
    ) -> None:
        self.ws, self.db, self.backend, self.engine, self.lock = ws, db, backend, engine, lock
        self.metrics = metrics
        self.oversight = oversight or Oversight.open(db)
        self.resync_interval = resync_interval
        self.state = LoopState()
        self._wake = anyio.Event()
        self._reasons: set[str] = set()
        self._ids = itertools.count(1)
        self._prefix = f"{os.getpid():x}"
        self._last_change = 0.0
        self._wake_at: float | None = None
        self._retry_s = RETRY_MIN_S
        self.on_reopen: Callable[[], None] | None = None
        """Called after the state database was reopened (the daemon records its processes again)."""
        self.on_pass: Callable[[], None] | None = None
        """Called before each pass (the daemon retries process records that failed to write)."""
        self.on_desired: Callable[[DesiredState], None] | None = None
        """Called with each pass's valid desired state (the daemon configures tracing from its Gateway)."""
        self.tracing: Tracing | None = None
        """Where each pass's span and its actions' spans go (None: no spans)."""
        self._span = PassSpan(None, "")
        self._plan_size = 0

    def _reload_tokens(self, desired: DesiredState) -> None:
        self.backend.outputs_written(self.db, desired, self.engine.renderer.snapshots)

    # -- triggers (callable from callbacks on the event loop thread) ---------------------------
    def trigger(self, reason: str) -> None:
        """Ask for a pass; triggers coalesce until the next one starts."""
        self._reasons.add(reason)
        self._wake.set()

    def trigger_in(self, reason: str, seconds: float) -> None:
        """Ask for a pass in ``seconds`` (the earliest such request wins)."""
        self._reasons.add(reason)
        when = time.monotonic() + seconds
        self._wake_at = when if self._wake_at is None else min(self._wake_at, when)

    def on_files_changed(self, paths: set[str]) -> None:
        """Watcher callback."""
        self._last_change = time.monotonic()
        log.debug("files changed: %s", ", ".join(sorted(os.path.relpath(p, self.ws.folder) for p in paths)))
        self.trigger("watch")

    def on_runtime_event(self, event: RuntimeEvent) -> None:
        """Runtimes supervisor callback: log, count, and re-reconcile on what matters."""
        # The runtimes layer logs every event itself; this only notes what it triggers.
        log.debug("runtime %s: %s", event.server, event.kind.value, extra={"reconcile_id": "-"})
        if event.kind is EventKind.CRASHED and self.metrics is not None:
            self.metrics.crashes.labels(server=event.server).inc()
        if event.kind in _WAKE_EVENTS:
            self.trigger(f"runtime:{event.server}:{event.kind.value}")

    # -- the loop ------------------------------------------------------------------------------
    async def run(self, after: anyio.Event | None = None) -> None:
        """Initial pass (once ``after`` is set), then one per batch of triggers or resync; forever."""
        self.state.watching = True
        self.write_status()
        if after is not None:
            await after.wait()
        self.trigger("start")
        try:
            while True:
                timeout = self.resync_interval
                if self._wake_at is not None:
                    timeout = max(0.0, min(timeout, self._wake_at - time.monotonic()))
                with anyio.move_on_after(timeout):
                    await self._wake.wait()
                self._wake, self._wake_at = anyio.Event(), None
                reasons, self._reasons = self._reasons, set()
                await self.reconcile(",".join(sorted(reasons)) or "resync")
        finally:
            self.state.watching = False

    async def reconcile(self, reason: str) -> PassOutcome:
        """One pass: sync runtimes, plan, apply; what it came to."""
        rid = f"{self._prefix}-{next(self._ids):04d}"
        with reconcile_context(rid):
            async with self.lock:
                started = time.monotonic()
                events = self.oversight.events
                # A resync that finds nothing to do is not news: it would push real events out
                # of the bounded queue within hours.
                quiet = reason == "resync"
                if not quiet:
                    events.publish(EventType.PASS_STARTED, "", id=rid, reason=reason)
                self._span, self._plan_size = PassSpan(self.tracing, reason), 0
                try:
                    self.check_database()
                    if self.on_pass is not None:
                        self.on_pass()
                    result = await self._pass(reason)
                    self.state.degrade("state", None)
                except StateError as exc:  # the disk refused a write: keep running, say so, retry
                    self.state.degrade("state", str(exc))
                    result = PassOutcome.DEGRADED
                except Exception:  # the loop must survive anything a pass does
                    log.exception("reconcile failed")
                    result = PassOutcome.ERROR
                elapsed = time.monotonic() - started
                self._span.close(result, plan_size=self._plan_size, duration_s=elapsed,
                                 failed=result.is_error)  # fmt: skip
                self.state.degrade("events", events.failure)
                # Recorded before "pass finished" goes out: a reader woken by that event (the
                # dashboard, MCP subscribers) must find loop.json and metrics already saying so.
                try:
                    self._record(rid, reason, result, elapsed)
                except Exception:  # metrics or status must not end the loop either
                    log.exception("recording the reconcile failed")
                if not (quiet and result is PassOutcome.UNCHANGED):
                    events.publish(EventType.PASS_FINISHED, "", id=rid, reason=reason, result=result,
                                   seconds=round(elapsed, 3))  # fmt: skip
            self.state.degrade("events", events.failure)
            self._schedule_retry()
        return result

    def _schedule_retry(self) -> None:
        if self.state.degraded:
            self.trigger_in("retry-degraded", self._retry_s)
            self._retry_s = min(RETRY_MAX_S, self._retry_s * 2)
        else:
            self._retry_s = RETRY_MIN_S

    def check_database(self) -> None:
        """Reopen the state database if it was deleted or replaced under the running supervisor."""
        why = self.db.replaced()
        if why is None:
            return
        notice = (
            f"the state database {self.db.path} {why} while the supervisor ran; reopened it and recorded "
            "the running servers in it again (history from before is only in the old file, if you kept it)"
        )
        log.warning("%s", notice)
        self.db.reopen()
        if self.db.recovered:
            log.warning("%s", self.db.recovered)
        self.state.notices.append(notice)
        if self.on_reopen is not None:
            self.on_reopen()

    async def _pass(self, reason: str) -> PassOutcome:
        log.info("reconcile started (%s)", reason)
        self.sync_runtimes()
        try:
            planned = self.engine.plan(self.db)
        except InvalidFolderError as exc:
            self.state.folder_valid = False
            self.state.diagnostics = [str(d) for d in exc.diagnostics.errors]
            log.error("the folder does not validate; keeping the last good state (%s)", exc)
            for line in self.state.diagnostics:
                log.error("  %s", line)
            errors = self.state.diagnostics
            self.oversight.events.publish(EventType.DIAGNOSTICS, "", valid=False, errors=errors)
            return PassOutcome.INVALID
        if self.state.folder_valid is False:
            log.info("the folder validates again")
            self.oversight.events.publish(EventType.DIAGNOSTICS, "", valid=True, errors=[])
        self.state.folder_valid, self.state.diagnostics = True, []
        if self.on_desired is not None:
            self.on_desired(planned.desired)
        self._span.open()
        deleting = [c.key for c in planned.plan.changes if c.action.value == "delete"]
        quiet = time.monotonic() - self._last_change
        if deleting and quiet < DELETE_SETTLE_S:
            wait = DELETE_SETTLE_S - quiet
            log.info(
                "%s vanished from the folder; waiting %.1fs for the folder to settle before deleting",
                ", ".join(deleting),
                wait,
            )
            self.trigger_in("settle", wait)
            return PassOutcome.SETTLING
        ctx = self._context(planned.desired)
        if self._refresh_server_status(ctx):
            planned = self.engine.plan(self.db)
        oversight = self.oversight
        held = hold_back(
            self.engine, self.db, planned, oversight.approvals, oversight.sources,
            requested_by="clawplane run",
        )  # fmt: skip
        planned = held.planned
        self._note_held(held.decision)
        ctx = self._context(planned.desired)
        plan = planned.plan
        if self.metrics is not None:
            self.metrics.plan_actions.set(len(plan.actionable))
        self._plan_size = len(plan.actionable)
        if not plan.has_changes:
            oversight.sources.remember(planned.validation)
            self.state.refused = None
            log.info("in sync; nothing to do")
            return PassOutcome.UNCHANGED
        if plan.mass_delete:
            deleted = [c.key for c in plan.changes if c.action.value == "delete"]
            self.state.refused = (
                f"the folder would delete {len(deleted)} resource(s) ({', '.join(deleted)}); not applied "
                "automatically — check the folder, then run `clawplane apply --allow-mass-delete`"
            )
            log.warning("%s", self.state.refused)
            return PassOutcome.REFUSED
        self.state.refused = None
        for change in plan.actionable:
            why = "; ".join(r.message for r in change.reasons)
            log.info("plan: %s %s%s", change.action.value, change.key, f" ({why})" if why else "")

        async def emit(event: dict[str, Any]) -> None:
            if event.get("event") == "done" and not event.get("ok"):
                log.error("%s failed: %s", event.get("key"), event.get("error"))
            elif event.get("event") in ("wrote", "removed"):
                log.info("%s %s", event["event"], event["path"])

        try:
            with self._span.current():
                result = await apply_plan(plan, ctx, allow_mass_delete=False, emit=emit)
        except PlanRefusedError as exc:  # the world moved between plan and apply: go round again
            log.warning("plan refused (%s); retrying", exc)
            self.trigger("retry")
            return PassOutcome.RETRY
        self.state.errors = {k: v for k, v in result.results.items() if v != "ok"}
        if self.metrics is not None:
            self.metrics.count_repairs(plan, result.results)
        oversight.sources.remember(planned.validation)
        released = {h.change.key for h in held.decision.released}
        if released and all(result.results.get(key) == "ok" for key in released):
            mark_applied(oversight.approvals, held.decision)
        self.state.degrade("outputs", "; ".join(result.output_errors) or None)
        done = sum(1 for v in result.results.values() if v == "ok")
        log.info(
            "reconcile applied: %d ok, %d failed, %d file(s) written, %d removed",
            done,
            len(self.state.errors),
            len(result.written),
            len(result.removed),
        )
        return PassOutcome.APPLIED if result.ok else PassOutcome.FAILED

    def _note_held(self, decision: HoldDecision) -> None:
        request = decision.request
        if request is None:
            self.state.held = None
            return
        self.state.held = {
            "approval": request.id,
            "status": request.status.value,
            "expiresAt": request.expires_at,
            "actions": [f"{h.change.action.value} {h.change.key} ({h.rule})" for h in decision.waiting],
        }
        if decision.new:
            log.warning(
                "held for approval %s: %s; answer with `clawplane approvals approve|reject %s`",
                request.id, ", ".join(self.state.held["actions"]), request.id,
            )  # fmt: skip

    def _context(self, desired: DesiredState) -> ApplyContext:
        # A server that is not Ready is a failed pass, reported with its cause (never "applied").
        return ApplyContext(
            desired, self.db, self.backend, self.engine.renderer, self.ws.out_dir,
            require_ready=True, on_outputs=self._reload_tokens,
            secret_reader=resolver_reader(self.engine.resolver), tracing=self.tracing,
        )  # fmt: skip

    def sync_runtimes(self) -> None:
        """Fold the live state of hosted runtimes into the state database (level-based)."""
        sync_runtimes(self.db, self.backend)

    def _refresh_server_status(self, ctx: ApplyContext) -> bool:
        """Rewrite the status of hosted servers whose live phase, restarts or session evictions moved
        since their last apply."""
        observed = store.load_observed(self.db)
        changed = False
        for d in ctx.desired.resources.values():
            if not isinstance(d.resource, McpServer):
                continue
            prior = observed.resources.get(d.key)
            report = self.backend.report(d.name)
            if prior is None or report is None or prior.config_hash != d.config_hash:
                continue
            phase = "Ready" if report.phase == "ready" else report.phase.capitalize()
            restarts = prior.status.get("restarts")
            evictions = prior.status.get("sessionEvictions", 0)
            if (
                prior.phase != phase
                or (restarts is not None and restarts != report.restarts)
                or evictions != report.session_evictions
            ):
                record_resource(d, ctx, report)
                changed = True
        return changed

    def _record(self, rid: str, reason: str, result: PassOutcome, elapsed: float) -> None:
        st = self.state
        st.reconciles += 1
        st.last_id, st.last_result, st.last_reason, st.last_at = rid, result, reason, utcnow()
        if result.ok:
            st.last_success_at = st.last_at
            st.ready = True
        if self.metrics is not None:
            m = self.metrics
            m.reconciles.labels(result=result).inc()
            m.duration.observe(elapsed)
            if result.is_error:
                m.errors.inc()
            if result.ok:
                m.last_success.set(time.time())
            m.folder_valid.set(1 if st.folder_valid else 0)
            m.set_degraded(st.degraded)
            m.observe_state(store.load_observed(self.db))
        log.info("reconcile %s in %.3fs", result, elapsed)
        self.write_status()

    def write_status(self) -> None:
        """Write ``loop.json`` atomically (0600); a failure is recorded in ``degraded``, not raised."""
        path = self.ws.state_dir / LOOP_STATUS_FILE
        try:
            # Errors and diagnostics quote what servers and providers said: values pass the redactor.
            text = json.dumps(redact_data(self.state.to_dict()), indent=2)
            write_loop_status(self.ws, text.encode("utf-8"))
        except OSError as exc:
            self.state.degrade(LOOP_STATUS_FILE, f"{exc.strerror or exc} ({path})")
        else:
            if LOOP_STATUS_FILE in self.state.degraded:
                self.state.degrade(LOOP_STATUS_FILE, None)
                self.write_status()
