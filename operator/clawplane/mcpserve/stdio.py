"""``clawplane mcp serve PATH``: the control-plane server over stdio, for one folder.

It reads the folder and its state database as ``clawplane status`` and ``plan`` do, and needs
no supervisor (with one running, ``status`` is live and answers to approvals go through it).
stdout carries only the protocol; logs go to stderr.
"""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from clawplane.mcpserve.folder import local_server
from clawplane.reconcile.applier import current_user
from clawplane.state import StateDB
from clawplane.supervisor import watch_folder
from clawplane.workspace import Workspace

__all__ = ["serve_stdio"]


async def serve_stdio(ws: Workspace) -> None:
    """Serve until stdin closes."""
    db = StateDB.open(ws.state_dir)
    try:
        server = local_server(ws, db, current_user())
        stop = anyio.Event()
        async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as tg:
            tg.start_soon(server.run_updates)
            tg.start_soon(lambda: watch_folder(ws.folder, lambda _paths: server.changed(),
                                               ignore=(ws.state_dir, ws.out_dir), stop=stop))  # fmt: skip
            await server.server.run(read_stream, write_stream, server.server.create_initialization_options())
            stop.set()
            tg.cancel_scope.cancel()
    finally:
        db.close()
