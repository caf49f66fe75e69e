"""What ``clawplane validate`` does once its arguments are parsed, without typer.

``validate.py`` declares the command to typer; this module holds its work, so that the
console script's fast path (``quickargs``) can run a plain ``validate PATH… [--quiet]``
without importing typer at all.
"""

from __future__ import annotations

import enum
from pathlib import Path

from clawplane.cli.console import EXIT_INVALID, EXIT_OK, out, print_diagnostic
from clawplane.diagnostics import Diagnostics, Severity, format_github, format_json, summary_line
from clawplane.validation import ValidationResult, validate_paths

__all__ = ["OutputFormat", "emit", "run_validate"]


class OutputFormat(enum.StrEnum):
    """How diagnostics are printed."""

    TEXT = "text"
    JSON = "json"
    GITHUB = "github"


def run_validate(paths: list[Path], *, output: OutputFormat, strict: bool, quiet: bool) -> int:
    """Validate ``paths``, print the result; the exit status (0 valid, 1 invalid)."""
    result = validate_paths(paths)
    emit(result, output=output, quiet=quiet, strict=strict)
    failed = result.diagnostics.has_errors or (strict and bool(result.diagnostics.warnings))
    return EXIT_INVALID if failed else EXIT_OK


def emit(
    result: ValidationResult, *, output: OutputFormat, quiet: bool = False, strict: bool = False
) -> None:
    """Print a validation result in the chosen format; ``quiet`` text is what fails the run only."""
    diags: Diagnostics = result.diagnostics
    files, resources = len(result.files), len(result.resources)
    if output is OutputFormat.JSON:
        out.print(format_json(diags, files=files, resources=resources), markup=False)
        return
    if output is OutputFormat.GITHUB:
        for d in diags.sorted():
            out.print(format_github(d), markup=False)
        return
    for d in diags.sorted():
        if not quiet or d.severity is Severity.ERROR or (strict and d.severity is Severity.WARNING):
            print_diagnostic(out, d)
    if not quiet:
        line = summary_line(diags, files=files, resources=resources)
        out.print(("invalid: " if diags.has_errors else "valid: ") + line, markup=False)
