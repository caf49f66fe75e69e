"""Options and helpers shared by the engine commands (plan, apply, status, run, down)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clawplane.cli.console import EXIT_INVALID, EXIT_USAGE, err, out, print_diagnostic
from clawplane.workspace import Workspace

if TYPE_CHECKING:  # the engine is imported lazily: `validate` must start fast
    from clawplane.reconcile.engine import InvalidFolderError
    from clawplane.state import StateDB

FolderArg = Annotated[Path, typer.Argument(help="The resource folder.", exists=True, file_okay=False)]
StateDirOpt = Annotated[
    Path | None, typer.Option("--state-dir", help="State directory (default: FOLDER/.clawplane).")
]
OutDirOpt = Annotated[Path | None, typer.Option("--out-dir", help="Rendered files (default: STATE_DIR/out).")]
LogLevelOpt = Annotated[
    str,
    typer.Option(
        "--log-level",
        help="Supervisor log level: debug (every stderr line of every server), info, warning, error.",
        case_sensitive=False,
    ),
]


def workspace(folder: Path, state_dir: Path | None, out_dir: Path | None) -> Workspace:
    """The workspace for a folder and the optional overrides."""
    return Workspace.for_folder(folder, state_dir=state_dir, out_dir=out_dir)


def open_state(ws: Workspace) -> StateDB:
    """The folder's state database; says so on stderr when a corrupt one was moved aside.

    Raises:
        StateError: It cannot be used (the message says what to do).
    """
    from clawplane.state import StateDB

    db = StateDB.open(ws.state_dir)
    if db.recovered:
        err.print(f"warning: {db.recovered}", markup=False)
    return db


def report_invalid(exc: InvalidFolderError) -> None:
    """Print a folder's diagnostics and exit 1."""
    for d in exc.diagnostics.sorted():
        print_diagnostic(out, d)
    out.print("the folder does not validate; nothing was changed", markup=False)
    raise typer.Exit(EXIT_INVALID)


def fail(message: str, code: int = EXIT_INVALID) -> None:
    """Print one error line and exit."""
    out.print(f"error: {message}", markup=False, style="red")
    raise typer.Exit(code)


def parse_log_level(name: str) -> int:
    """The ``logging`` level of a ``--log-level`` value; a usage error (exit 2) otherwise."""
    from clawplane.reconcile.logs import LogLevelError, level_number

    try:
        return level_number(name)
    except LogLevelError as exc:
        fail(str(exc), EXIT_USAGE)
        raise AssertionError("unreachable") from None
