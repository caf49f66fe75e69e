"""The ``clawplane`` executable: ``clawplane k8s …`` runs the operator, everything else is the CLI.

``clawplane mcp serve``, ``login|logout --kubernetes`` and ``run`` (with the control plane's MCP
endpoint, which it passes to its supervisor) are typer commands; ``k8s`` is the one argparse
program left (issue 38: it becomes ``cli`` too).
"""

from __future__ import annotations

import sys


def main() -> None:
    """Dispatch to the operator or the CLI by the first argument."""
    if sys.argv[1:2] == ["k8s"]:
        from clawplane.k8s.main import main as k8s_main

        sys.exit(k8s_main(sys.argv[2:]))
    from clawplane.cli import main as cli_main

    cli_main()
