"""Terminal output: colour on a TTY (honouring NO_COLOR), plain text otherwise.

rich is imported when something is first printed: a command that prints nothing (``validate
--quiet`` of a valid folder) does not pay for it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from clawplane.diagnostics import Diagnostic, Severity, format_text

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def make_console(*, stderr: bool = False) -> Console:
    """A console that colours only on a terminal and never when NO_COLOR is set."""
    from rich.console import Console

    no_color = bool(os.environ.get("NO_COLOR"))
    return Console(
        stderr=stderr, no_color=no_color, highlight=False, soft_wrap=True, emoji=False, markup=True
    )


class _OnFirstUse:
    """Stands for the console ``make_console`` makes, made when first used."""

    def __init__(self, *, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            self._console = make_console(stderr=self._stderr)
        return getattr(self._console, name)


out = cast("Console", _OnFirstUse(stderr=False))
err = cast("Console", _OnFirstUse(stderr=True))


def print_diagnostic(console: Console, diagnostic: Diagnostic) -> None:
    """Print one diagnostic, coloured by severity on a terminal."""
    if not console.is_terminal or console.no_color:
        console.print(format_text(diagnostic), markup=False)
        return
    from rich.markup import escape

    loc = f"[bold]{escape(str(diagnostic.location))}[/]: " if diagnostic.location else ""
    style = _STYLES[diagnostic.severity]
    at = f" [dim](at {escape(diagnostic.path)})[/]" if diagnostic.path else ""
    # The brackets around the code are text, not markup: escape them with it.
    console.print(
        f"{loc}[{style}]{diagnostic.severity.value}[/][dim]{escape(f'[{diagnostic.code}]')}[/]: "
        f"{escape(diagnostic.message)}{at}"
    )
    if diagnostic.hint:
        console.print(f"  [green]hint:[/] {escape(diagnostic.hint)}")


@contextmanager
def fail_cleanly() -> Iterator[None]:
    """Turn any unexpected exception into a one-line error and exit code 3."""
    try:
        yield
    except KeyboardInterrupt:
        err.print("interrupted", markup=False)
        sys.exit(130)
    except SystemExit:
        raise
    except BaseException as exc:  # the last line of defence: never show a traceback
        if os.environ.get("CLAWPLANE_DEBUG"):
            raise
        err.print(f"clawplane: internal error: {type(exc).__name__}: {exc}", markup=False)
        err.print("Please report this; set CLAWPLANE_DEBUG=1 to see the traceback.", markup=False)
        sys.exit(EXIT_INTERNAL)
