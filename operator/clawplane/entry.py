"""The ``clawplane`` executable: ``clawplane k8s …`` runs the operator (and ``login|logout
--kubernetes`` writes a cluster's OAuth login), ``clawplane mcp serve`` the control plane as an
MCP server, everything else the CLI.

The CLI, the Kubernetes adapter and the MCP server are independent entry points (docs/architecture.md
layers); this dispatcher is the only module that knows them all. It also hands the folder
supervisor (``clawplane run``) the control plane's MCP endpoint, ``/mcp/_clawplane``.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Dispatch to the operator, the MCP server or the CLI by the first arguments."""
    if sys.argv[1:2] == ["k8s"]:
        from clawplane.k8s.main import main as k8s_main

        sys.exit(k8s_main(sys.argv[2:]))
    from clawplane.cli import main as cli_main

    cli_main()
