"""The ``clawplane`` command line (the only place that imports typer and rich)."""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

from clawplane.cli.console import fail_cleanly

QUICK_COMMANDS = frozenset(
    {"validate", "schema", "get", "plan", "status", "explain", "diff", "doctor", "import", "down"}
)
"""Commands that do their work and end (unlike ``run``, ``bridge``, or any command added later)."""


def main() -> None:
    """Run the CLI; no Python traceback ever reaches the user."""
    command = sys.argv[1] if len(sys.argv) > 1 else None
    if command in QUICK_COMMANDS:
        # The process ends with the command, and the command's garbage is acyclic in bulk (see
        # gc_paused): the collector would only traverse it. A serving command needs it.
        gc.disable()
    from clawplane._utils.gcpause import gc_paused

    try:
        with fail_cleanly():
            # Only the command asked for is imported (defining models makes garbage the collector
            # need not chase): `clawplane validate` starts in a fraction of the time.
            if command == "validate":
                _validate_without_typer(sys.argv[2:])
            with gc_paused():
                from clawplane.cli.app import build_app

                cli = build_app(command)
            cli(prog_name="clawplane")
    finally:
        # The process exits next: frozen objects leave the interpreter's final collection
        # nothing to traverse (a sixth of a quick command's time, for no memory returned).
        gc.freeze()


def _validate_without_typer(args: list[str]) -> None:
    """Run ``validate`` and exit when its arguments need no typer (see ``quickargs``)."""
    from clawplane.cli.quickargs import parse_validate

    parsed = parse_validate(args)
    if parsed is None:
        return
    from clawplane.cli.validating import run_validate

    try:
        code = run_validate(parsed.paths, output=parsed.output, strict=parsed.strict, quiet=parsed.quiet)
    except BrokenPipeError:
        # The reader of our output went away (`validate … | head`): exit 1 as click does, with
        # stdout pointed at /dev/null so that the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    sys.exit(code)


def __getattr__(name: str) -> Any:
    if name == "app":
        from clawplane.cli.app import app

        return app
    raise AttributeError(name)


__all__ = ["app", "main"]
