"""``clawplane apply``: plan, confirm, and have the folder's supervisor carry the plan out."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer

from clawplane.cli.common import (
    LogLevelOpt,
    OutDirOpt,
    StateDirOpt,
    fail,
    open_state,
    parse_log_level,
    report_invalid,
    workspace,
)
from clawplane.cli.console import EXIT_INVALID, out
from clawplane.reconcile.applier import current_user
from clawplane.state import FolderLock, StateDB, StateError
from clawplane.supervisor import LoopArgs, SupervisorStartError, start_detached, stop_supervisor
from clawplane.workspace import ControlError, SupervisorClient, SupervisorInfo, Workspace

if TYPE_CHECKING:
    from clawplane.planning import Plan
    from clawplane.reconcile.engine import Planned

APPLY_TIMEOUT_S = 600.0


def apply(
    target: Annotated[Path, typer.Argument(help="A resource folder, or a plan saved with `plan --out`.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking.")] = False,
    allow_mass_delete: Annotated[
        bool, typer.Option("--allow-mass-delete", help="Allow a plan that deletes most or all resources.")
    ] = False,
    approve: Annotated[
        bool,
        typer.Option(
            "--approve",
            help="Apply the actions a Gateway approval rule holds too, approving them as yourself "
            "(audited); without it they wait for `clawplane approvals approve`.",
        ),
    ] = False,
    no_wait: Annotated[
        bool,
        typer.Option(
            "--no-wait",
            help="Hand the plan to the supervisor and return without checking that servers become "
            "Ready (see `clawplane status`).",
        ),
    ] = False,
    log_level: LogLevelOpt = "info",
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """Apply a folder (plan, show, confirm) or a saved plan (refused if anything moved since).

    Waits until each changed server is Ready (tools listed) or has failed, within its
    connection timeout; a server that failed makes apply exit 1 with its last stderr lines.
    """
    parse_log_level(log_level)
    saved: Plan | None = None
    if target.is_file():
        saved = _load_saved(target)
        folder = Path(saved.folder)
    elif target.is_dir():
        folder = target
    else:
        fail(f"{target} is neither a folder nor a saved plan")
        return
    ws = workspace(folder, state_dir, out_dir)
    options = _Options(yes, allow_mass_delete, not no_wait, LoopArgs(log_level=log_level), approve)
    try:
        with FolderLock(ws.state_dir):
            _apply_locked(ws, saved, options)
    except StateError as exc:
        fail(str(exc))


@dataclass(frozen=True)
class _Options:
    yes: bool
    allow_mass_delete: bool
    wait: bool
    supervisor: LoopArgs
    approve: bool = False


def _load_saved(path: Path) -> Plan:
    from clawplane.planning import Plan

    try:
        return Plan.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        fail(f"{path} is not a clawplane plan: {exc}".splitlines()[0])
        raise AssertionError("unreachable") from None


def _apply_locked(ws: Workspace, saved: Plan | None, options: _Options) -> None:
    from clawplane.reconcile.engine import Engine, InvalidFolderError

    if saved is None:
        try:
            Engine(ws).load()
        except InvalidFolderError as exc:
            report_invalid(exc)
    _check_out_dir(ws)
    # The supervisor starts first so the plan sees the runtimes it will act on. One this
    # command started is stopped again unless the plan was handed to it: nothing keeps
    # running for an apply that was cancelled, refused or had nothing to do.
    db = open_state(ws)  # first: a corrupt database is moved aside here, with a message
    try:
        info, started = start_detached(ws, loop=options.supervisor)
    except SupervisorStartError as exc:
        fail(str(exc))
        return
    handed_over = False
    try:
        found = _plan_to_apply(ws, db, saved, options)
        if found is None:
            return
        plan, env = found
        handed_over = True
        ok = anyio.run(_send, SupervisorClient.of(info), plan, options, env)
    finally:
        if started and not handed_over:
            _stop_started(ws, info)
    if not ok:
        raise typer.Exit(EXIT_INVALID)


def _stop_started(ws: Workspace, info: SupervisorInfo) -> None:
    """Stop a supervisor this command started for nothing, with everything it runs."""
    if not stop_supervisor(info):
        out.print(f"warning: the supervisor (pid {info.pid}) did not stop; run `clawplane down {ws.folder}`",
                  markup=False)  # fmt: skip


def _check_out_dir(ws: Workspace) -> None:
    """Refuse before anything starts when the rendered files would go where another user could aim them."""
    from clawplane.render.files import open_out_dir

    try:
        open_out_dir(ws.out_dir).close()
    except OSError as exc:
        fail(f"cannot write the rendered files into {ws.out_dir}: {exc.strerror or exc}")


def _plan_to_apply(
    ws: Workspace, db: StateDB, saved: Plan | None, options: _Options
) -> tuple[Plan, dict[str, str | None]] | None:
    """The plan to send (shown and confirmed) with the env values it was made with, or None."""
    from clawplane.planning import render_plan
    from clawplane.reconcile.engine import Engine, InvalidFolderError

    if saved is not None:
        out.print(render_plan(saved), markup=False)
        try:
            return saved, _referenced_env(Engine(ws).load()[0].env_references())
        except InvalidFolderError as exc:
            report_invalid(exc)
            return None
    planned = Engine(ws).plan(db)
    plan = planned.plan
    out.print(render_plan(plan), markup=False)
    if not plan.has_changes:
        return None
    _show_held(planned, options)
    if plan.mass_delete and not options.allow_mass_delete:
        fail("this plan deletes most or all managed resources; check it, then pass --allow-mass-delete")
    _confirm(options.yes)
    return plan, _referenced_env(planned.desired.env_references())


def _referenced_env(names: set[str]) -> dict[str, str | None]:
    """This shell's values of the variables the folder references (None: unset), for the supervisor.

    The plan was computed from them, so the supervisor must apply with them too; it keeps
    them in memory only. They travel over the control socket, which only this user can open.
    """
    return {name: os.environ.get(name) for name in sorted(names)}


def _show_held(planned: Planned, options: _Options) -> None:
    """Which actions the Gateway's approval rules hold, and what happens to them."""
    from clawplane.approvals import held_actions, rules_of

    held = held_actions(planned.plan, planned.desired, planned.observed, rules_of(planned.desired.gateway))
    if not held:
        return
    what = "applied too, approved by you (--approve)" if options.approve else "held for approval, not applied"
    out.print(f"\n{len(held)} action(s) an approval rule holds — {what}:", markup=False)
    for h in held:
        out.print(f"  {h.change.action.value} {h.change.key} (rule {h.rule})", markup=False)


def _confirm(yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        fail("refusing to apply without confirmation: pass --yes (stdin is not a terminal)")
    if not typer.confirm("\nApply these changes?", default=False):
        out.print("Apply cancelled; nothing was changed.", markup=False)
        raise typer.Exit(EXIT_INVALID)


async def _send(client: SupervisorClient, plan: Plan, options: _Options, env: dict[str, str | None]) -> bool:
    shown = {c.key for c in plan.actionable}

    def show(event: dict[str, Any]) -> None:
        if event.get("key", "") in shown or "path" in event:
            _progress(event)  # unchanged resources only get their status refreshed

    try:
        with anyio.fail_after(APPLY_TIMEOUT_S):
            final = await client.apply(
                plan, env=env, wait=options.wait, allow_mass_delete=options.allow_mass_delete,
                by=f"cli:{current_user()}", approve_as=f"cli:{current_user()}" if options.approve else None,
                on_event=show,
            )  # fmt: skip
    except (ControlError, TimeoutError) as exc:
        out.print(f"error: lost the supervisor during apply: {exc}", markup=False)
        return False
    if final.get("error"):
        out.print(f"error: {final['error']}", markup=False)
        return False
    _summary(final, plan, wait=options.wait)
    held = final.get("held")
    if isinstance(held, dict):
        approval = held["approval"]
        state = "requested" if held.get("new") else approval["status"]
        out.print(f"\nHeld for approval {approval['id']} ({state}, expires {approval['expiresAt']}): "
                  f"{approval['summary']}", markup=False)  # fmt: skip
        folder = plan.folder
        out.print(f"  answer: clawplane approvals approve|reject {folder} {approval['id']}; "
                  f"or apply them now: clawplane apply {folder} --approve", markup=False)  # fmt: skip
    return bool(final.get("ok"))


def _summary(final: dict[str, Any], plan: Plan, *, wait: bool) -> None:
    """The outcome as it is: what succeeded, and for each failed server why and what to do."""
    results: dict[str, str] = final.get("results", {})
    actionable = {c.key for c in plan.actionable}
    failed = {k: v for k, v in results.items() if v != "ok"}
    done = sum(1 for k, v in results.items() if v == "ok" and k in actionable)
    written = len(final.get("written", []))
    unwritten: list[str] = list(final.get("outputErrors") or [])
    head = "Apply complete" if not failed and not unwritten else "Apply FAILED"
    out.print(f"\n{head}: {done} succeeded, {len(failed)} failed; {written} file(s) written.", markup=False)
    for problem in unwritten:  # a rendered file the disk or the checks refused: nobody reads it otherwise
        out.print(f"\nnot written: {problem}", markup=False)
    failures: dict[str, dict[str, Any]] = final.get("failures", {})
    for key, error in failed.items():
        out.print(f"\n{key}: {error}", markup=False)
        failure = failures.get(key, {})
        lines = failure.get("stderr") or []
        if lines:
            out.print(f"  last {len(lines)} stderr line(s):", markup=False)
            for line in lines:
                out.print(f"    {line}", markup=False)
        if failure.get("hint"):
            out.print(f"  hint: {failure['hint']}", markup=False)
    if not wait:
        servers = sum(1 for c in plan.actionable if c.kind == "McpServer")
        if servers:
            out.print(
                f"{servers} server change(s) handed over without waiting (--no-wait); "
                f"`clawplane status {plan.folder}` shows whether they are Ready.",
                markup=False,
            )


def _progress(event: dict[str, Any]) -> None:
    kind = event.get("event")
    if kind == "start":
        out.print(f"  {event['key']}: {event['action']}...", markup=False)
    elif kind == "done":
        status = "done" if event.get("ok") else "FAILED"
        out.print(f"  {event['key']}: {status}", markup=False)
    elif kind in ("wrote", "removed"):
        out.print(f"  {kind} {event['path']}", markup=False)
    elif kind == "write-failed":
        out.print(f"  could not write {event['path']}", markup=False)
