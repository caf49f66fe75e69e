"""``clawplane mcp serve``: clawplane as an MCP server (argparse: the CLI layer is separate)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


def parser() -> argparse.ArgumentParser:
    """The ``clawplane mcp serve`` argument parser."""
    p = argparse.ArgumentParser(
        prog="clawplane mcp serve",
        description="Serve a folder's control plane over MCP on stdio: status, validate, plan, explain, "
        "agents' tools and skills, events, approvals and the audit log. The folder's supervisor serves "
        "the same server at http://127.0.0.1:PORT/mcp/_clawplane (token: `clawplane token show DIR cli`).",
    )
    p.add_argument("folder", type=Path, help="The resource folder.")
    p.add_argument("--state-dir", type=Path, default=None, help="State dir (default: FOLDER/.clawplane).")
    p.add_argument("--out-dir", type=Path, default=None, help="Rendered files (default: STATE_DIR/out).")
    p.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"))
    return p


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and serve until stdin closes."""
    args = parser().parse_args(argv)
    if not args.folder.is_dir():
        print(f"error: {args.folder} is not a folder", file=sys.stderr)
        return 2
    # stdout is the protocol: every log line goes to stderr.
    logging.basicConfig(
        level=args.log_level.upper(), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    import anyio

    from clawplane.mcpserve.stdio import serve_stdio
    from clawplane.state import StateError
    from clawplane.workspace import Workspace

    ws = Workspace.for_folder(args.folder, state_dir=args.state_dir, out_dir=args.out_dir)
    try:
        anyio.run(serve_stdio, ws)
    except StateError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
