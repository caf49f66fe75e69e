"""The ``clawplane`` command line (the only place that imports typer and rich)."""

from __future__ import annotations

import sys

from clawplane.cli.app import app
from clawplane.cli.console import fail_cleanly


def main() -> None:
    """Run the CLI; no Python traceback ever reaches the user."""
    with fail_cleanly():
        app(prog_name="clawplane")


__all__ = ["app", "main"]
_ = sys
