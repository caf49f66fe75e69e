"""clawplane.approvals: plan approval rules and the queue of pending approvals (plans and tool calls).

Public API (plain values and one queue; a web UI lists and answers approvals with it directly):

- ``ApprovalQueue(db, events)`` — ``find(statuses=…, kind=…)``, ``get(id)``, ``respond(id,
  "approve"|"reject", by=…, reason=…)``, ``request(…)``, ``wait(id, timeout=…)``, ``expire_due()``.
- ``Approval``, ``ApprovalKind``, ``Status``, ``Decision``, ``ApprovalError`` — the values.
- ``held_actions(plan, desired, observed, rules)`` / ``rules_of(gateway)`` — which plan actions a
  Gateway's ``spec.approvals.rules`` hold; ``decide(queue, held, …)`` splits them per pass into
  waiting and released, and ``mark_applied`` closes what was released.
- ``ToolCallApprovals`` — holds tool calls through clawplane's endpoints in the same queue.

The tool-call names resolve on first use (PEP 562): they sit on the MCP proxy, and loading the
MCP SDK would add ~0.7 s to `clawplane apply`, which only asks which plan actions are held.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from clawplane.approvals.planhold import HoldDecision, decide, mark_applied
from clawplane.approvals.policy import HeldAction, fingerprint, held_actions, rules_of
from clawplane.approvals.queue import ApprovalQueue
from clawplane.approvals.records import Approval, ApprovalError, ApprovalKind, Decision, Status

if TYPE_CHECKING:
    from clawplane.approvals.toolcalls import ToolCallApprovals, redacted_arguments

__all__ = [
    "Approval",
    "ApprovalError",
    "ApprovalKind",
    "ApprovalQueue",
    "Decision",
    "HeldAction",
    "HoldDecision",
    "Status",
    "ToolCallApprovals",
    "decide",
    "fingerprint",
    "held_actions",
    "mark_applied",
    "redacted_arguments",
    "rules_of",
]


def __getattr__(name: str) -> Any:
    """Import the tool-call gate when one of its names is first read."""
    if name not in ("ToolCallApprovals", "redacted_arguments"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("clawplane.approvals.toolcalls"), name)
    globals()[name] = value
    return value
