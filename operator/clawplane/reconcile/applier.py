"""Apply executes a plan and nothing else: runtime actions, state records, rendered files.

Order of work: refuse a stale plan or an unguarded mass delete; record the audit
entry; run resource changes with bounded concurrency (a failed action is recorded and
reported, it does not stop unrelated ones); then render every output from the fresh
observed state and write the files whose content changed; finally close the audit
entry with the outcome. Secrets are resolved only inside the backend.
"""

from __future__ import annotations

import getpass
import socket
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from clawplane.desired import DesiredResource, DesiredState, RuntimeMode
from clawplane.models import McpServer, ModelProvider
from clawplane.planning import ActionType, Change, Plan
from clawplane.providers import ProbeResult
from clawplane.reconcile.backend import RuntimeBackend, RuntimeReport, ToolInfo
from clawplane.reconcile.conditions import Cond, merge
from clawplane.reconcile.hints import failure_hint
from clawplane.reconcile.modelproviders import SecretReader, local_reader, probe, provider_status
from clawplane.reconcile.rendered.outputs import OutputRenderer
from clawplane.reconcile.rendered.writing import write_outputs
from clawplane.runtimes.oauth import awaiting_login
from clawplane.state import (
    ObservedState,
    ResourceRecord,
    RuntimeRecord,
    StateDB,
    ToolRecord,
    store,
    utcnow,
)
from clawplane.telemetry import Tracing, action_span

Emit = Callable[[dict[str, Any]], Awaitable[None]]


class PlanRefusedError(Exception):
    """The plan cannot be applied as it is; the message says what to do."""


class ProbeFailedError(Exception):
    """A provider was rendered and its status recorded, but it did not answer its probe."""


class ServerNotReadyError(Exception):
    """A server this apply started or probed is not Ready: why, its stderr, and what to do."""

    def __init__(self, name: str, report: RuntimeReport, timeout_s: float) -> None:
        if report.phase == "starting":
            cause = f"did not become ready within {timeout_s:g}s (still starting)"
        else:
            cause = (report.last_error or f"ended up {report.phase}").removeprefix(f'MCP server "{name}": ')
        retrying = " — the supervisor keeps retrying with back-off" if report.phase == "backoff" else ""
        super().__init__(f"not ready ({report.phase}{retrying}): {cause}")
        self.phase = report.phase
        self.stderr = report.stderr
        self.hint = failure_hint(cause, report.stderr)


@dataclass
class ApplyResult:
    """How an apply went: per-change outcome, the files written, and why failed servers failed."""

    ok: bool = True
    results: dict[str, str] = field(default_factory=dict)  # key -> "ok" | error message
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    """key -> {"phase", "stderr", "hint"} for servers that are not Ready."""
    output_errors: list[str] = field(default_factory=list)
    """Rendered files that could not be written (full or read-only disk): retried next time."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "ok": self.ok,
            "results": self.results,
            "written": self.written,
            "removed": self.removed,
            "failures": self.failures,
            "outputErrors": self.output_errors,
        }


@dataclass
class ApplyContext:
    """Everything an apply touches."""

    desired: DesiredState
    db: StateDB
    backend: RuntimeBackend
    renderer: OutputRenderer
    out_dir: Path
    concurrency: int = 4
    supervisor_alive: bool = True
    require_ready: bool = False
    """A server that is not Ready after its change fails that change (local applies and loop)."""
    restart_crashed: bool = False
    """Start a backing-off or failed hosted server afresh instead of waiting out its back-off
    (what someone running ``clawplane apply`` by hand asks for)."""
    on_outputs: Callable[[DesiredState], None] | None = None
    """Called once the rendered files are written (the local endpoint reloads its tokens and agents)."""
    secret_reader: SecretReader | None = None
    """How provider probes resolve secrets (default: this process's environment and files)."""
    tracing: Tracing | None = None
    """Where each action's span goes (a child of the pass's span; None: no spans)."""


SETTLED_PHASES = frozenset({"Ready", "Disabled", "NotProbed", "ToolsUnknown", "LoginRequired"})
"""Phases whose spec is in effect: nothing but a new spec (or a person's OAuth login) moves them on."""


def check_plan(plan: Plan, ctx: ApplyContext, *, allow_mass_delete: bool) -> None:
    """Refuse plans made for another folder state, and unguarded mass deletes."""
    observed = store.load_observed(ctx.db)
    observed = _with_supervisor(observed, ctx.supervisor_alive)
    if plan.desired_fingerprint != ctx.desired.fingerprint:
        raise PlanRefusedError(
            "the folder, or a secret it references, changed since this plan was made; "
            "run `clawplane plan` again"
        )
    if plan.observed_fingerprint != observed.fingerprint():
        raise PlanRefusedError(
            "the running state changed since this plan was made; run `clawplane plan` again"
        )
    if plan.mass_delete and not allow_mass_delete:
        raise PlanRefusedError(
            "this plan deletes most or all managed resources; check the folder, then pass --allow-mass-delete"
        )


def _with_supervisor(observed: ObservedState, alive: bool) -> ObservedState:
    return replace(observed, supervisor_alive=alive)


async def apply_plan(plan: Plan, ctx: ApplyContext, *, allow_mass_delete: bool, emit: Emit) -> ApplyResult:
    """Execute ``plan`` (after ``check_plan``) and record everything it did."""
    check_plan(plan, ctx, allow_mass_delete=allow_mass_delete)
    actions = [{"key": c.key, "action": c.action.value} for c in plan.actionable]
    audit_id = store.audit_begin(
        ctx.db,
        user=current_user(),
        host=socket.gethostname(),
        git_commit=_git_commit(ctx.desired.folder),
        plan_hash=plan.plan_hash(),
        actions=actions,
    )
    result = ApplyResult()
    limiter = anyio.CapacityLimiter(ctx.concurrency)

    async def run(change: Change) -> None:
        async with limiter:
            with action_span(ctx.tracing, change.kind, change.name, change.action.value) as span:
                await emit({"event": "start", "key": change.key, "action": change.action.value})
                try:
                    await _apply_change(change, ctx)
                    result.results[change.key] = "ok"
                    span.outcome("ok")
                    done = {"event": "done", "key": change.key, "action": change.action.value, "ok": True}
                    await emit(done)
                except ServerNotReadyError as exc:
                    result.results[change.key] = str(exc)
                    result.ok = False
                    span.outcome("failed", exc)
                    failure = {"phase": exc.phase, "stderr": list(exc.stderr), "hint": exc.hint}
                    result.failures[change.key] = failure
                    await emit({"event": "done", "key": change.key, "ok": False, "error": str(exc),
                                **failure})  # fmt: skip
                except Exception as exc:  # one failed action must not stop unrelated ones
                    message = f"{type(exc).__name__}: {exc}"
                    result.results[change.key] = message
                    result.ok = False
                    span.outcome("failed", exc)
                    await emit({"event": "done", "key": change.key, "ok": False, "error": message})

    # Servers and providers first: server tools feed the catalogs and prompts rendered
    # afterwards, and the models a provider lists feed its agents' status.
    first = ("McpServer", "ModelProvider")
    async with anyio.create_task_group() as tg:
        for change in plan.changes:
            if change.kind in first:
                tg.start_soon(run, change)
    await _write_outputs(ctx, result, emit)
    async with anyio.create_task_group() as tg:
        for change in plan.changes:
            if change.kind not in first:
                tg.start_soon(run, change)
    store.audit_finish(
        ctx.db,
        audit_id,
        outcome="success" if result.ok else "partial",
        detail="; ".join(f"{k}: {v}" for k, v in result.results.items() if v != "ok"),
    )
    return result


async def _apply_change(change: Change, ctx: ApplyContext) -> None:
    desired = ctx.desired.resources.get(change.key)
    if change.action is ActionType.DELETE:
        if change.kind == "McpServer":
            await ctx.backend.remove(change.name)
            store.delete_runtime(ctx.db, change.name)
        store.delete_resource(ctx.db, change.key)
        return
    assert desired is not None
    report: RuntimeReport | None = None
    if isinstance(desired.resource, ModelProvider):
        if change.action is ActionType.NOOP:
            return  # unchanged and last probed fine: its recorded status stands
        found = await probe(desired, ctx.secret_reader or local_reader(ctx.renderer.environ))
        record_resource(desired, ctx, None, probed=found)
        if ctx.require_ready and found.outcome == "failed":
            raise ProbeFailedError(f"{found.reason}: {found.message}")
        return
    if isinstance(desired.resource, McpServer):
        report = await _server_action(change, desired, ctx)
    record_resource(desired, ctx, report)
    not_ready = report is not None and report.phase != "ready" and not awaiting_login(report.last_error)
    if ctx.require_ready and report is not None and not_ready:
        timeout = desired.resource.spec.connection_timeout_ms / 1000  # type: ignore[attr-defined]
        raise ServerNotReadyError(desired.name, report, timeout)


async def _server_action(change: Change, d: DesiredResource, ctx: ApplyContext) -> RuntimeReport | None:
    spec = d.resource.spec  # type: ignore[attr-defined]
    needs_run = change.action in (ActionType.CREATE, ActionType.REPLACE) or any(
        r.code.value in ("tools-not-discovered",) for r in change.reasons
    )
    if d.runtime is RuntimeMode.NONE:
        await ctx.backend.remove(d.name)
        store.delete_runtime(ctx.db, d.name)
        return None
    if d.runtime is RuntimeMode.HOSTED:
        report = ctx.backend.report(d.name)
        if ctx.restart_crashed and report is not None and report.phase in ("backoff", "failed"):
            await ctx.backend.remove(d.name)  # try now: the cause may have been fixed meanwhile
            report = None
        if needs_run or report is None:
            report = await ctx.backend.ensure(
                d.name,
                spec,
                safe_name=d.safe_name,
                config_hash=d.config_hash,
                base_dir=d.base_dir,
                resolved=d.secrets,
            )
    elif needs_run or change.action is ActionType.UPDATE:
        report = await ctx.backend.probe(
            d.name, spec, safe_name=d.safe_name, base_dir=d.base_dir, resolved=d.secrets
        )
    else:
        return None
    _record_runtime(d, report, ctx)
    return report


def _record_runtime(d: DesiredResource, report: RuntimeReport, ctx: ApplyContext) -> None:
    spec = d.resource.spec  # type: ignore[attr-defined]
    store.put_runtime(
        ctx.db,
        RuntimeRecord(
            name=d.name,
            config_hash=d.config_hash,
            hosting=spec.hosting.value,
            transport=spec.effective_transport.value,
            phase=report.phase,
            pid=report.pid,
            pgid=report.pgid,
            restarts=report.restarts,
            last_error=report.last_error,
            paused_until=report.paused_until,
            protocol_version=report.protocol_version,
            server_info=report.server_info,
            endpoint=report.endpoint,
            started_at=utcnow(),
        ),
    )
    if report.phase == "ready":
        tools = [ToolRecord(t.raw_name, t.safe_name, t.schema_hash, t.description) for t in report.tools]
        store.set_tools(ctx.db, d.name, "observed", tools)
        store.set_tools(ctx.db, d.name, "applied", tools)


def record_resource(
    d: DesiredResource, ctx: ApplyContext, report: RuntimeReport | None, *, probed: ProbeResult | None = None
) -> None:
    """Write the status (phase, conditions, fields) of ``d`` as ``report`` (or a provider probe) shows it."""
    prior = store.load_resource(ctx.db, d.key)
    if (
        isinstance(d.resource, McpServer)
        and report is None
        and prior is not None
        and d.runtime is not RuntimeMode.NONE
    ):
        report = ctx.backend.report(d.name) or _stored_report(ctx, d.name)
    generation = (prior.generation + (prior.config_hash != d.config_hash)) if prior else 1
    conds, phase, status = provider_status(d, probed) if probed is not None else _conditions(d, report)
    status["digests"] = dict(d.digests)
    if d.resource.metadata.labels:
        # A delete is matched against these by approval rules once the resource is gone.
        status["labels"] = dict(d.resource.metadata.labels)
    if report is not None and report.stderr:
        status["stderr"] = list(report.stderr)
    if d.kind == "Agent":
        status.update(ctx.renderer.agent_status(d.name))
    ok = phase in SETTLED_PHASES
    store.put_resource(
        ctx.db,
        ResourceRecord(
            key=d.key,
            kind=d.kind,
            name=d.name,
            config_hash=d.config_hash,
            generation=generation,
            observed_generation=generation if ok else (prior.observed_generation if prior else 0),
            spec=d.spec,
            phase=phase,
            conditions=merge(prior.conditions if prior else [], conds, generation=generation),
            status=status,
        ),
    )


def _stored_report(ctx: ApplyContext, name: str) -> RuntimeReport | None:
    """The last recorded state of a runtime nothing touched in this apply (e.g. a probed remote server)."""
    record, found = store.load_runtime(ctx.db, name)
    if record is None:
        return None
    tools = tuple(ToolInfo(t.raw_name, t.safe_name, t.schema_hash, t.description) for t in found)
    return RuntimeReport(
        phase=record.phase,
        restarts=record.restarts,
        last_error=record.last_error,
        protocol_version=record.protocol_version,
        server_info=record.server_info,
        endpoint=record.endpoint,
        tools=tools,
    )


def _conditions(d: DesiredResource, report: RuntimeReport | None) -> tuple[list[Cond], str, dict[str, Any]]:
    base = [Cond("Accepted", True, "Valid"), Cond("ResolvedRefs", True, "AllResolved")]
    if not isinstance(d.resource, McpServer):
        return [*base, Cond("Programmed", True, "Rendered"), Cond("Ready", True, "Ready")], "Ready", {}
    if d.runtime is RuntimeMode.NONE:
        conds = [
            Cond("Programmed", True, "Disabled", "server is disabled"),
            Cond("ToolsDiscovered", False, "Disabled"),
            Cond("Ready", False, "Disabled"),
        ]
        return [*base, *conds], "Disabled", {"toolCount": 0}
    assert report is not None
    ready = report.phase == "ready"
    status = {
        "toolCount": len(report.tools),
        "filteredTools": report.filtered_tools,
        "restarts": report.restarts,
        "configHash": d.config_hash,
        "runtime": d.runtime.value,
    }
    if report.endpoint:
        status["endpoint"] = report.endpoint
    if report.session_evictions:  # only once it happened: most servers never reach maxSessions
        status["sessionEvictions"] = report.session_evictions
    message = report.last_error or ""
    # A hosted runtime is programmed once it was handed over, even while it is still starting.
    handed_over = d.runtime is RuntimeMode.HOSTED and report.phase != "failed"
    programmed = (
        "RuntimeStarted" if ready else "RuntimeStarting" if report.phase == "starting" else "RuntimeFailed"
    )
    # An OAuth server nobody logged in to waits on the operator: not a failure (runtimes/oauth).
    waiting = None if ready else awaiting_login(message)
    phase = "Ready" if ready else waiting or report.phase.capitalize()
    conds = [
        Cond("Programmed", ready or handed_over, programmed if waiting is None else waiting, message),
        Cond(
            "ToolsDiscovered",
            ready,
            "ToolsListed" if ready else waiting or "NotDiscovered",
            f"{len(report.tools)} tools" if ready else message,
        ),
        Cond("Ready", ready, phase, message),
    ]
    return [*base, *conds], phase, status


async def _write_outputs(ctx: ApplyContext, result: ApplyResult, emit: Emit) -> None:
    written, removed = write_outputs(
        ctx.desired, ctx.db, ctx.renderer, ctx.out_dir, errors=result.output_errors
    )
    if result.output_errors:
        result.ok = False
        for failed in result.output_errors:
            await emit({"event": "write-failed", "path": failed.split(":", 1)[0], "error": failed})
    for rel in written:
        result.written.append(rel)
        await emit({"event": "wrote", "path": rel})
    for rel in removed:
        result.removed.append(rel)
        await emit({"event": "removed", "path": rel})
    if ctx.on_outputs is not None:
        ctx.on_outputs(ctx.desired)


def current_user() -> str:
    """Who runs this process (for the audit log), "unknown" when the system cannot say."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _git_commit(folder: Path) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None
