"""The ``clawplane`` command line (the only place that imports typer and rich)."""

from __future__ import annotations

import sys
from typing import Any

from clawplane.cli.console import fail_cleanly


def main() -> None:
    """Run the CLI; no Python traceback ever reaches the user."""
    from clawplane._utils.gcpause import gc_paused
    from clawplane.cli.app import build_app

    with fail_cleanly():
        # Only the command asked for is imported (defining models makes garbage the collector
        # need not chase): `clawplane validate` starts in a fraction of the time.
        with gc_paused():
            cli = build_app(sys.argv[1] if len(sys.argv) > 1 else None)
        cli(prog_name="clawplane")


def __getattr__(name: str) -> Any:
    if name == "app":
        from clawplane.cli.app import app

        return app
    raise AttributeError(name)


__all__ = ["app", "main"]
