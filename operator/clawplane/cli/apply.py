"""``clawplane apply``: plan, confirm, and have the folder's supervisor carry the plan out."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer

from clawplane.cli.common import OutDirOpt, StateDirOpt, fail, report_invalid, workspace
from clawplane.cli.console import EXIT_INVALID, out
from clawplane.cli.run import start_detached
from clawplane.reconcile.control import ControlError, request
from clawplane.reconcile.workspace import Workspace
from clawplane.state import FolderLock, StateDB, StateError

if TYPE_CHECKING:
    from clawplane.planning import Plan

APPLY_TIMEOUT_S = 600.0


def apply(
    target: Annotated[Path, typer.Argument(help="A resource folder, or a plan saved with `plan --out`.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking.")] = False,
    allow_mass_delete: Annotated[
        bool, typer.Option("--allow-mass-delete", help="Allow a plan that deletes most or all resources.")
    ] = False,
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """Apply a folder (plan, show, confirm) or a saved plan (refused if anything moved since)."""
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
    try:
        with FolderLock(ws.state_dir):
            _apply_locked(ws, saved, yes=yes, allow_mass_delete=allow_mass_delete)
    except StateError as exc:
        fail(str(exc))


def _load_saved(path: Path) -> Plan:
    from clawplane.planning import Plan

    try:
        return Plan.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        fail(f"{path} is not a clawplane plan: {exc}".splitlines()[0])
        raise AssertionError("unreachable") from None


def _apply_locked(ws: Workspace, saved: Plan | None, *, yes: bool, allow_mass_delete: bool) -> None:
    from clawplane.planning import render_plan
    from clawplane.reconcile.engine import Engine, InvalidFolderError

    if saved is None:
        # Start the supervisor first so the plan sees the runtimes it will act on.
        try:
            Engine(ws).load()
        except InvalidFolderError as exc:
            report_invalid(exc)
        info = start_detached(ws)
        plan = Engine(ws).plan(StateDB.open(ws.state_dir)).plan
        out.print(render_plan(plan), markup=False)
        if not plan.has_changes:
            return
        if plan.mass_delete and not allow_mass_delete:
            fail("this plan deletes most or all managed resources; check it, then pass --allow-mass-delete")
        _confirm(yes)
    else:
        plan = saved
        out.print(render_plan(plan), markup=False)
        info = start_detached(ws)
    ok = anyio.run(_send, Path(info.socket), plan, allow_mass_delete)
    if not ok:
        raise typer.Exit(EXIT_INVALID)


def _confirm(yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        fail("refusing to apply without confirmation: pass --yes (stdin is not a terminal)")
    if not typer.confirm("\nApply these changes?", default=False):
        out.print("Apply cancelled; nothing was changed.", markup=False)
        raise typer.Exit(EXIT_INVALID)


async def _send(socket: Path, plan: Plan, allow_mass_delete: bool) -> bool:
    message = {"op": "apply", "plan": plan.model_dump(mode="json"), "allow_mass_delete": allow_mass_delete}
    final: dict[str, Any] = {}
    try:
        with anyio.fail_after(APPLY_TIMEOUT_S):
            async for event in request(socket, message):
                if event.get("final"):
                    final = event
                else:
                    _progress(event)
    except (ControlError, TimeoutError) as exc:
        out.print(f"error: lost the supervisor during apply: {exc}", markup=False)
        return False
    if final.get("error"):
        out.print(f"error: {final['error']}", markup=False)
        return False
    failed = {k: v for k, v in final.get("results", {}).items() if v != "ok"}
    done = len(final.get("results", {})) - len(failed)
    out.print(f"\nApply complete: {done} succeeded, {len(failed)} failed; "
              f"{len(final.get('written', []))} file(s) written.", markup=False)  # fmt: skip
    return bool(final.get("ok"))


def _progress(event: dict[str, Any]) -> None:
    kind = event.get("event")
    if kind == "start":
        out.print(f"  {event['key']}: {event['action']}...", markup=False)
    elif kind == "done":
        status = "done" if event.get("ok") else f"FAILED: {event.get('error')}"
        out.print(f"  {event['key']}: {status}", markup=False)
    elif kind in ("wrote", "removed"):
        out.print(f"  {kind} {event['path']}", markup=False)
