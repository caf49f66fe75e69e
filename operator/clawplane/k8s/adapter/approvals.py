"""Plan approvals in Kubernetes: held actions, answers by annotation, and the ``Approved`` condition.

The Gateway's ``spec.approvals.rules`` hold plan actions exactly as under ``clawplane run``
(``reconcile.holding.hold_back``, one queue in the namespace's state database). A held
action is answered by annotating the held resource — ``clawplane.dev/approve: <id>`` or
``clawplane.dev/reject: <id>`` (``clawplane.dev/approval-reason`` says why) — so whoever may
annotate that resource (RBAC ``patch``) may answer for it, and only for it: an annotation
naming a request that does not hold this resource is refused. A held delete keeps the
object terminating (its finalizer stays) so it can still be annotated.

Each resource whose action is held carries ``Approved=False`` with reason
``AwaitingApproval`` (the message names the request and the annotation to set),
``Rejected`` or ``Expired``; once approved it is ``Approved=True`` (reason ``Approved``).
Every answer is audited and an event in the namespace's queue (``ApprovalQueue``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from clawplane.approvals import Approval, ApprovalError, ApprovalQueue, Decision, HoldDecision, Status
from clawplane.k8s.adapter.materialize import key_of
from clawplane.reconcile.conditions import Cond

__all__ = [
    "APPROVE_ANNOTATION",
    "REASON_ANNOTATION",
    "REJECT_ANNOTATION",
    "answer_annotations",
    "approval_conditions",
    "held_message",
]

log = logging.getLogger("clawplane.k8s")

APPROVE_ANNOTATION = "clawplane.dev/approve"
REJECT_ANNOTATION = "clawplane.dev/reject"
REASON_ANNOTATION = "clawplane.dev/approval-reason"
_ANSWERS = ((APPROVE_ANNOTATION, Decision.APPROVE), (REJECT_ANNOTATION, Decision.REJECT))
_REASONS = {Status.PENDING: "AwaitingApproval", Status.REJECTED: "Rejected", Status.EXPIRED: "Expired"}


def _held_keys(approval: Approval) -> set[str]:
    return {str(a.get("key")) for a in approval.subject.get("actions", ())}


def _manager(cr: dict[str, Any], annotation: str) -> str:
    """Who set ``annotation``: the field manager that owns it (``kubectl-annotate``…), if recorded."""
    for entry in cr["metadata"].get("managedFields") or ():
        if f'"f:{annotation}"' in json.dumps(entry.get("fieldsV1") or {}):
            return str(entry.get("manager") or "unknown")
    return "unknown"


def answer_annotations(
    queue: ApprovalQueue, crs: Iterable[dict[str, Any]], refused: set[str]
) -> list[Approval]:
    """Take the answers the resources' annotations give to pending requests that hold them.

    An annotation naming an unknown, answered or foreign request is logged once (``refused``
    remembers it) and otherwise ignored: the annotation stays as the user wrote it.
    """
    answered = []
    for cr in crs:
        annotations = cr["metadata"].get("annotations") or {}
        key = key_of(cr)
        for annotation, decision in _ANSWERS:
            approval_id = str(annotations.get(annotation) or "").strip()
            if not approval_id:
                continue
            current = queue.get(approval_id)
            why = None
            if current is None:
                why = "no such approval request"
            elif key not in _held_keys(current):
                why = f"approval {approval_id} does not hold {key}"
            elif not current.pending:
                continue  # answered already (perhaps by this very annotation)
            if why is not None:
                if (note := f"{key} {annotation}={approval_id}") not in refused:
                    refused.add(note)
                    log.warning("%s: annotation %s=%s ignored: %s", key, annotation, approval_id, why)
                continue
            by = f"k8s:{_manager(cr, annotation)} ({annotation} on {key})"
            reason = str(annotations.get(REASON_ANNOTATION) or "")
            try:
                answered.append(queue.respond(approval_id, decision, by=by, reason=reason))
            except ApprovalError as exc:
                log.warning("%s: %s", key, exc)
    return answered


def held_message(approval: Approval, key: str) -> str:
    """What a held resource's status says about its request."""
    actions = [f"{a.get('action')} {a.get('key')}" for a in approval.subject.get("actions", ())]
    held = ", ".join(a for a in actions if a.endswith(key)) or key
    if approval.status is Status.PENDING:
        return (
            f"{held} waits for approval {approval.id} (expires {approval.expires_at}): annotate this "
            f"resource with {APPROVE_ANNOTATION}={approval.id} or {REJECT_ANNOTATION}={approval.id}"
        )
    who = f" by {approval.resolved_by}" if approval.resolved_by else ""
    why = f": {approval.reason}" if approval.reason else ""
    return f"{held} is not applied: approval {approval.id} was {approval.status.value}{who}{why}"


def approval_conditions(decision: HoldDecision) -> dict[str, Cond]:
    """``Approved`` per resource key for this pass: the waiting ones False, the released True."""
    conds: dict[str, Cond] = {}
    request = decision.request
    if request is not None:
        reason = _REASONS.get(request.status, "AwaitingApproval")
        for held in decision.waiting:
            key = held.change.key
            conds[key] = Cond("Approved", False, reason, held_message(request, key))
    for approval in decision.approved:
        for key in _held_keys(approval):
            if key not in conds:
                who = f" by {approval.resolved_by}" if approval.resolved_by else ""
                conds[key] = Cond("Approved", True, "Approved", f"approval {approval.id} was approved{who}")
    return conds
