"""``clawplane mcp serve``: a folder's control plane as an MCP server over stdio."""

from __future__ import annotations

import logging
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from clawplane.cli.common import OutDirOpt, StateDirOpt


class LogLevel(StrEnum):
    """The levels ``--log-level`` takes."""

    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


def mcp_serve(
    folder: Annotated[Path, typer.Argument(help="The resource folder.")],
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
    log_level: Annotated[
        LogLevel, typer.Option("--log-level", help="Log level (stderr).")
    ] = LogLevel.WARNING,
) -> None:
    """Serve a folder's control plane over MCP on stdio: status, validate, plan, explain, agents' tools
    and skills, events, approvals and the audit log. The folder's supervisor serves the same server at
    http://127.0.0.1:PORT/mcp/_clawplane (token: `clawplane token show DIR cli`).
    """
    if not folder.is_dir():
        print(f"error: {folder} is not a folder", file=sys.stderr)
        raise typer.Exit(2)
    # stdout is the protocol: every log line goes to stderr.
    logging.basicConfig(
        level=log_level.value.upper(), stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    import anyio

    from clawplane.mcpserve.stdio import serve_stdio
    from clawplane.state import StateError
    from clawplane.workspace import Workspace

    ws = Workspace.for_folder(folder, state_dir=state_dir, out_dir=out_dir)
    try:
        anyio.run(serve_stdio, ws)
    except StateError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
