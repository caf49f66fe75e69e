"""Answering an approval from outside the supervisor (the CLI, the stdio MCP server).

While the folder's supervisor runs, the answer goes through its control socket, so the loop
applies an approved plan at once; otherwise it is written to the state database directly and
the next pass (``clawplane run`` or ``clawplane apply``) takes it up.
"""

from __future__ import annotations

from clawplane.approvals import Approval, ApprovalError, ApprovalQueue, Decision
from clawplane.events import EventQueue
from clawplane.state import StateDB
from clawplane.workspace import ControlError, SupervisorClient, Workspace, read_info, supervisor_alive

__all__ = ["respond"]

_TIMEOUT_S = 10.0


async def respond(
    ws: Workspace, db: StateDB, approval_id: str, decision: Decision | str, *, by: str, reason: str = ""
) -> Approval:
    """Answer ``approval_id`` (see the module docstring).

    Raises:
        ApprovalError: No such request, it was answered already, or it expired.
    """
    info = read_info(ws)
    if info is not None and supervisor_alive(ws):
        try:
            client = SupervisorClient.of(info, timeout=_TIMEOUT_S)
            event = await client.respond(approval_id, str(Decision(decision)), by=by, reason=reason)
            if not event.get("ok"):
                raise ApprovalError(str(event.get("error") or "the supervisor refused the answer"))
            found = ApprovalQueue(db).get(approval_id)
            if found is None:
                raise ApprovalError(f"approval request {approval_id!r} is gone")
            return found
        except ControlError:
            pass  # the supervisor is going away: write the answer where it will find it
    return ApprovalQueue(db, EventQueue(db)).respond(approval_id, decision, by=by, reason=reason)
