"""The control-plane server of a folder, wired to its state: queries, queues and answers."""

from __future__ import annotations

from clawplane.approvals import Approval
from clawplane.mcpserve.server import ControlPlaneServer
from clawplane.mcpserve.tools import APPROVE, READ, Caller
from clawplane.reconcile.answers import respond
from clawplane.reconcile.oversight import Oversight
from clawplane.reconcile.queries import FolderQueries
from clawplane.state import StateDB
from clawplane.workspace import Workspace

__all__ = ["local_server", "supervisor_server"]


def local_server(ws: Workspace, db: StateDB, who: str) -> ControlPlaneServer:
    """The server ``clawplane mcp serve`` runs: answers go through the supervisor when one runs."""

    async def answer(approval_id: str, decision: str, by: str, reason: str) -> Approval:
        return await respond(ws, db, approval_id, decision, by=by, reason=reason)

    queries = FolderQueries(ws, db, Oversight.open(db), answer)
    return ControlPlaneServer(queries, local=Caller(f"local:{who}", frozenset({READ, APPROVE})))


def supervisor_server(ws: Workspace, db: StateDB, oversight: Oversight) -> ControlPlaneServer:
    """The server the supervisor serves at ``/mcp/_clawplane``: answers are taken in this process."""

    async def answer(approval_id: str, decision: str, by: str, reason: str) -> Approval:
        return oversight.respond(approval_id, decision, by=by, reason=reason)

    server = ControlPlaneServer(FolderQueries(ws, db, oversight, answer))
    oversight.events.subscribe(server.on_event)
    return server
