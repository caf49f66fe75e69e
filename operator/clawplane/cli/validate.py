"""``clawplane validate``: schema and semantic checks with exact diagnostics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clawplane.cli.validating import OutputFormat, run_validate

__all__ = ["validate"]


def validate(
    paths: Annotated[list[Path], typer.Argument(help="Resource files or folders (searched recursively).")],
    output: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="text, json or github annotations.")
    ] = OutputFormat.TEXT,
    strict: Annotated[bool, typer.Option("--strict", help="Treat warnings as errors.")] = False,
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="Print only what fails: errors (and warnings with --strict)."),
    ] = False,
) -> None:
    """Validate resources: exit 0 when valid, 1 when invalid (or warnings with --strict)."""
    raise typer.Exit(run_validate(paths, output=output, strict=strict, quiet=quiet))
