"""The supervisor's answers on its control socket: one method per request of ``workspace.protocol``.

Applies and token rotations share one lock with the run loop, so one reconcile runs at a time;
an apply asked for while another runs is refused, and one that arrives while a previous
supervisor's leftovers are being stopped waits for that first.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any

import anyio

from clawplane.approvals import ApprovalError, mark_applied
from clawplane.desired import DesiredState
from clawplane.planning import Plan
from clawplane.reconcile.applier import ApplyContext, PlanRefusedError, apply_plan, check_plan
from clawplane.reconcile.engine import Engine, InvalidFolderError
from clawplane.reconcile.holding import hold_back
from clawplane.reconcile.localbackend import LocalBackend
from clawplane.reconcile.loop import ReconcileLoop
from clawplane.reconcile.modelproviders import resolver_reader
from clawplane.reconcile.oversight import Oversight
from clawplane.state import StateDB, StateError
from clawplane.supervisor.tokenops import rotate
from clawplane.workspace import (
    Apply,
    Ping,
    ProtocolError,
    Respond,
    RotateTokens,
    Runtimes,
    Shutdown,
    Workspace,
    decode,
)

Emit = Callable[[dict[str, Any]], Awaitable[None]]


def live_reports(backend: LocalBackend) -> dict[str, dict[str, Any]]:
    """What each runtime of ``backend`` reports right now, JSON-ready (texts already redacted)."""
    reports = {name: backend.report(name) for name in backend.supervisor.names()}
    return {name: asdict(r) for name, r in reports.items() if r is not None}


class ControlHandler:
    """Answers the control socket's requests for one folder's supervisor."""

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
        if self.loop.on_desired is not None:  # an apply sees the Gateway as a pass does
            self.loop.on_desired(planned.desired)
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
            on_outputs=lambda applied: self.backend.outputs_written(
                self.db, applied, self.engine.renderer.snapshots
            ),
            secret_reader=resolver_reader(self.engine.resolver), tracing=self.loop.tracing,
        )  # fmt: skip
