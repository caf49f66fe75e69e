"""The ``clawplane`` executable: ``clawplane k8s …`` runs the operator, everything else the CLI.

The CLI and the Kubernetes adapter are independent entry points (DESIGN.md layers);
this dispatcher is the only module that knows both.
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
