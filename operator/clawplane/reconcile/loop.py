"""The GitOps loop behind ``clawplane run``: reconcile on start, on change, on events, on a timer.

Level-based: every pass re-reads the folder and the state database and never trusts what
woke it. A pass first folds the live state of the hosted runtimes into the state database
(phase, pid, restarts, the tool surface they now report), then plans and applies with the
same engine and applier as ``clawplane apply``. Triggers arriving during a pass coalesce
into one further pass. A folder that stops validating changes nothing: the last good state
keeps running, the diagnostics are logged and exposed, and the next valid save converges.
A plan that deletes most or all resources is never applied automatically; it is reported.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
from dataclasses import dataclass, field, replace
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
from clawplane.reconcile.oversight import Oversight
from clawplane.reconcile.supervisorfile import LOOP_STATUS_FILE
from clawplane.reconcile.workspace import Workspace
from clawplane.runtimes import EventKind, RuntimeEvent
from clawplane.state import StateDB, ToolRecord, store, utcnow

log = logging.getLogger("clawplane.reconcile")

DEFAULT_RESYNC_S = 30.0
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
    last_result: str | None = None
    last_reason: str | None = None
    last_at: str | None = None
    last_success_at: str | None = None
    refused: str | None = None
    errors: dict[str, str] = field(default_factory=dict)
    held: dict[str, Any] | None = None
    """The approval request the plan's held actions wait on, and those actions."""

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
        }


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

    def _reload_tokens(self) -> None:
        self.backend.refresh_access(self.db)

    # -- triggers (callable from callbacks on the event loop thread) ---------------------------
    def trigger(self, reason: str) -> None:
        """Ask for a pass; triggers coalesce until the next one starts."""
        self._reasons.add(reason)
        self._wake.set()

    def on_files_changed(self, paths: set[str]) -> None:
        """Watcher callback."""
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
    async def run(self) -> None:
        """Initial pass, then one pass per batch of triggers or per resync interval; forever."""
        self.state.watching = True
        self.write_status()
        self.trigger("start")
        try:
            while True:
                with anyio.move_on_after(self.resync_interval):
                    await self._wake.wait()
                self._wake = anyio.Event()
                reasons, self._reasons = self._reasons, set()
                await self.reconcile(",".join(sorted(reasons)) or "resync")
        finally:
            self.state.watching = False

    async def reconcile(self, reason: str) -> str:
        """One pass: sync runtimes, plan, apply. Returns the result label."""
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
                try:
                    result = await self._pass(reason)
                except Exception:  # the loop must survive anything a pass does
                    log.exception("reconcile failed")
                    result = "error"
                elapsed = time.monotonic() - started
                if not (quiet and result == "unchanged"):
                    events.publish(EventType.PASS_FINISHED, "", id=rid, reason=reason, result=result,
                                   seconds=round(elapsed, 3))  # fmt: skip
            self._record(rid, reason, result, elapsed)
        return result

    async def _pass(self, reason: str) -> str:
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
            return "invalid"
        if self.state.folder_valid is False:
            log.info("the folder validates again")
            self.oversight.events.publish(EventType.DIAGNOSTICS, "", valid=True, errors=[])
        self.state.folder_valid, self.state.diagnostics = True, []
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
        if not plan.has_changes:
            oversight.sources.remember(planned.validation)
            self.state.refused = None
            log.info("in sync; nothing to do")
            return "unchanged"
        if plan.mass_delete:
            deleted = [c.key for c in plan.changes if c.action.value == "delete"]
            self.state.refused = (
                f"the folder would delete {len(deleted)} resource(s) ({', '.join(deleted)}); not applied "
                "automatically — check the folder, then run `clawplane apply --allow-mass-delete`"
            )
            log.warning("%s", self.state.refused)
            return "refused"
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
            result = await apply_plan(plan, ctx, allow_mass_delete=False, emit=emit)
        except PlanRefusedError as exc:  # the world moved between plan and apply: go round again
            log.warning("plan refused (%s); retrying", exc)
            self.trigger("retry")
            return "retry"
        self.state.errors = {k: v for k, v in result.results.items() if v != "ok"}
        oversight.sources.remember(planned.validation)
        released = {h.change.key for h in held.decision.released}
        if released and all(result.results.get(key) == "ok" for key in released):
            mark_applied(oversight.approvals, held.decision)
        done = sum(1 for v in result.results.values() if v == "ok")
        log.info(
            "reconcile applied: %d ok, %d failed, %d file(s) written, %d removed",
            done,
            len(self.state.errors),
            len(result.written),
            len(result.removed),
        )
        return "applied" if result.ok else "failed"

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
        )  # fmt: skip

    def sync_runtimes(self) -> None:
        """Fold the live state of hosted runtimes into the state database (level-based)."""
        observed = store.load_observed(self.db)
        live = set(self.backend.supervisor.names())
        for name, rt in observed.runtimes.items():
            if name not in live:
                if rt.pid is not None and rt.phase != "stopped":
                    store.put_runtime(
                        self.db, replace(rt, phase="stopped", pid=None, pgid=None, updated_at=utcnow())
                    )
                continue
            report = self.backend.report(name)
            if report is None:
                continue
            fresh = replace(
                rt,
                phase=report.phase,
                pid=report.pid,
                pgid=report.pgid,
                restarts=report.restarts,
                last_error=report.last_error,
                paused_until=report.paused_until,
            )
            if fresh != rt:
                store.put_runtime(self.db, replace(fresh, updated_at=utcnow()))
            if report.phase == "ready":
                tools = tuple(
                    ToolRecord(t.raw_name, t.safe_name, t.schema_hash, t.description) for t in report.tools
                )
                if tools != tuple(observed.tools_observed.get(name, ())):
                    log.info("runtime %s: tool surface changed (%d tools)", name, len(tools))
                    store.set_tools(self.db, name, "observed", tools)

    def _refresh_server_status(self, ctx: ApplyContext) -> bool:
        """Rewrite the status of hosted servers whose live phase moved since their last apply."""
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
            if prior.phase != phase or (restarts is not None and restarts != report.restarts):
                record_resource(d, ctx, report)
                changed = True
        return changed

    def _record(self, rid: str, reason: str, result: str, elapsed: float) -> None:
        st = self.state
        st.reconciles += 1
        st.last_id, st.last_result, st.last_reason, st.last_at = rid, result, reason, utcnow()
        ok = result in ("applied", "unchanged")
        if ok:
            st.last_success_at = st.last_at
            st.ready = True
        if self.metrics is not None:
            m = self.metrics
            m.reconciles.labels(result=result).inc()
            m.duration.observe(elapsed)
            if result in ("error", "failed", "invalid"):
                m.errors.inc()
            if ok:
                m.last_success.set(time.time())
            m.folder_valid.set(1 if st.folder_valid else 0)
            m.observe_state(store.load_observed(self.db))
        log.info("reconcile %s in %.3fs", result, elapsed)
        self.write_status()

    def write_status(self) -> None:
        """Write ``loop.json`` atomically."""
        path = self.ws.state_dir / LOOP_STATUS_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state.to_dict(), indent=2), encoding="utf-8")
        tmp.replace(path)
