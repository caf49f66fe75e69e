"""``clawplane plan``: what apply would change, without changing anything."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

from clawplane._utils.safedir import write_file
from clawplane.cli.common import (
    FolderArg,
    OutDirOpt,
    StateDirOpt,
    fail,
    open_state,
    report_invalid,
    workspace,
)
from clawplane.cli.console import out
from clawplane.state import StateError

EXIT_CHANGES = 2


class PlanFormat(enum.StrEnum):
    """How the plan is printed."""

    TEXT = "text"
    JSON = "json"


def plan(
    folder: FolderArg,
    save: Annotated[
        Path | None, typer.Option("--out", "-o", help="Save the plan as JSON for `apply`.")
    ] = None,
    detailed_exitcode: Annotated[
        bool, typer.Option("--detailed-exitcode", help="Exit 0 with no changes, 2 with changes, 1 on error.")
    ] = False,
    output: Annotated[PlanFormat, typer.Option("--format", "-f", help="text or json.")] = PlanFormat.TEXT,
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """Show the actions apply would take; secrets are never shown."""
    from clawplane.planning import render_plan
    from clawplane.reconcile.engine import Engine, InvalidFolderError

    ws = workspace(folder, state_dir, out_dir)
    try:
        db = open_state(ws)
        planned = Engine(ws).plan(db)
    except InvalidFolderError as exc:
        report_invalid(exc)
        return
    except StateError as exc:
        fail(str(exc))
        return
    out.print(
        planned.plan.to_json() if output is PlanFormat.JSON else render_plan(planned.plan), markup=False
    )
    if save is not None:
        try:
            # Where nobody else can aim it: no link is followed, nothing replaced that is not ours.
            write_file(save, (planned.plan.to_json() + "\n").encode("utf-8"), option="--out FILE")
        except OSError as exc:
            fail(f"cannot save the plan to {save}: {exc.strerror or exc}")
        if output is PlanFormat.TEXT:
            out.print(f"\nSaved the plan to {save}; apply it with `clawplane apply {save}`.", markup=False)
    if detailed_exitcode and planned.plan.has_changes:
        raise typer.Exit(EXIT_CHANGES)
