"""Deciding, pass by pass, which held plan actions wait, which go ahead, and which request covers them.

Per pass the held actions (``policy.held_actions``) are split:

- an action an ``approved`` request holds exactly (same key, action and config hashes) is
  *released*: it is applied in this pass, and the request becomes ``applied`` afterwards;
- the rest wait as one request, found by the fingerprint of exactly what waits: a pending,
  rejected or expired request with that fingerprint stays in force (a rejected or expired
  one is not asked again until the folder changes what it holds); otherwise a new pending
  request is made. Any other pending plan request is superseded: the folder moved on.

``apply --approve`` approves what waits at once, on behalf of the person running it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clawplane.approvals.policy import HeldAction, fingerprint
from clawplane.approvals.queue import ApprovalQueue
from clawplane.approvals.records import Approval, ApprovalKind, Decision, Status

__all__ = ["HoldDecision", "decide", "mark_applied"]

_STANDING = frozenset({Status.PENDING, Status.REJECTED, Status.EXPIRED})


@dataclass(frozen=True, slots=True)
class HoldDecision:
    """What one pass does with the actions the rules hold."""

    waiting: tuple[HeldAction, ...] = ()
    """Not applied in this pass."""
    released: tuple[HeldAction, ...] = ()
    """Approved: applied in this pass."""
    request: Approval | None = None
    """The request ``waiting`` waits on (pending, rejected or expired)."""
    approved: tuple[Approval, ...] = ()
    """Requests whose actions are released (marked applied once the apply went through)."""
    new: bool = False
    """``request`` was made in this pass."""

    @property
    def waiting_keys(self) -> set[str]:
        """Keys of the resources whose actions wait."""
        return {h.change.key for h in self.waiting}


def _identities(approval: Approval) -> set[tuple[str, ...]]:
    return {tuple(str(part) for part in i) for i in approval.subject.get("identities", ())}


def _summary(held: Sequence[HeldAction]) -> str:
    parts = [f"{h.change.action.value} {h.change.key}" for h in held]
    shown = ", ".join(parts[:5]) + (f" and {len(parts) - 5} more" if len(parts) > 5 else "")
    return f"plan: {shown}"


def decide(
    queue: ApprovalQueue,
    held: Sequence[HeldAction],
    *,
    plan_hash: str,
    requested_by: str,
    folder: str = "",
    approve_as: str | None = None,
) -> HoldDecision:
    """Split ``held`` for this pass (see the module docstring); ``approve_as`` approves what waits."""
    approved = queue.find(statuses=(Status.APPROVED,), kind=ApprovalKind.PLAN)
    approved_ids: set[tuple[str, ...]] = set().union(*(_identities(a) for a in approved))
    released = tuple(h for h in held if h.identity in approved_ids)
    waiting = tuple(h for h in held if h.identity not in approved_ids)
    released_ids = {h.identity for h in released}
    used = tuple(a for a in approved if _identities(a) & released_ids)
    fp = fingerprint(waiting) if waiting else ""
    for stale in queue.find(statuses=(Status.PENDING,), kind=ApprovalKind.PLAN):
        if stale.fingerprint != fp:
            queue.set_status(stale.id, Status.SUPERSEDED, reason="the folder changed what it held")
    if not waiting:
        return HoldDecision(released=released, approved=used)
    standing = queue.latest(kind=ApprovalKind.PLAN, fingerprint=fp)
    new = False
    if standing is None or standing.status not in _STANDING or (approve_as and not standing.pending):
        ttl_ms = min(h.ttl_ms for h in waiting)
        standing = queue.request(
            ApprovalKind.PLAN,
            summary=_summary(waiting),
            subject={
                "folder": folder,
                "actions": [h.to_dict() for h in waiting],
                "identities": [list(h.identity) for h in waiting],
            },
            ttl_s=ttl_ms / 1000,
            requested_by=requested_by,
            fingerprint=fp,
            plan_hash=plan_hash,
        )
        new = True
    if approve_as is not None:
        standing = queue.respond(standing.id, Decision.APPROVE, by=approve_as, reason="apply --approve")
        return HoldDecision(released=(*released, *waiting), approved=(*used, standing), new=new)
    return HoldDecision(waiting=waiting, released=released, request=standing, approved=used, new=new)


def mark_applied(queue: ApprovalQueue, decision: HoldDecision) -> None:
    """Close the approved requests whose actions this pass applied."""
    for approval in decision.approved:
        current = queue.get(approval.id)
        if current is not None:
            # The approver's own words stay on record; "applied" is added, not swapped in.
            applied = "the approved actions were applied"
            said = current.reason.strip()
            reason = f"{said}; {applied}" if said else applied
            by = approval.resolved_by or "clawplane"
            queue.set_status(approval.id, Status.APPLIED, by=by, reason=reason)
