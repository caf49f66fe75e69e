"""The ``clawplane`` executable: the CLI (``clawplane.cli``), every command included.

``clawplane k8s run``, ``mcp serve`` and ``login|logout --kubernetes`` are typer commands that
call the operator and the MCP server; ``run`` passes its supervisor the control plane's MCP
endpoint. Only ``clawplane validate`` takes a fast path, inside ``cli.main``.
"""

from __future__ import annotations


def main() -> None:
    """Run the CLI."""
    from clawplane.cli import main as cli_main

    cli_main()
