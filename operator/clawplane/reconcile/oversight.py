"""What a folder's supervisor shares with its loop, its control socket and its MCP endpoints.

``Oversight`` bundles the folder's event queue, its approval queue and the memory of what
was last applied (for held actions). It turns runtime events into queue events, and takes
answers to approvals (``respond``), waking the loop so approved actions are applied at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from clawplane.approvals import Approval, ApprovalKind, ApprovalQueue, Decision
from clawplane.events import EventQueue, EventType
from clawplane.reconcile.holding import AppliedSources
from clawplane.runtimes import EventKind, RuntimeEvent
from clawplane.secrets import redact
from clawplane.state import StateDB

__all__ = ["Oversight"]

# The phase a server is in after each runtime event (as `status` names phases).
_PHASES = {
    EventKind.STARTING: "Starting",
    EventKind.READY: "Ready",
    EventKind.START_FAILED: "Backoff",
    EventKind.CRASHED: "Crashed",
    EventKind.RESTART_SCHEDULED: "Backoff",
    EventKind.GAVE_UP: "Failed",
    EventKind.PAUSED: "Paused",
    EventKind.STOPPED: "Stopped",
}


@dataclass
class Oversight:
    """The folder's events, approvals and applied sources (see the module docstring)."""

    events: EventQueue
    approvals: ApprovalQueue
    sources: AppliedSources = field(default_factory=AppliedSources)
    on_answer: Callable[[Approval], None] | None = None
    """Called after an answer was taken here (the loop triggers a pass for plan approvals)."""

    @classmethod
    def open(cls, db: StateDB) -> Oversight:
        """The queues of the folder whose state database is ``db``."""
        events = EventQueue(db)
        return cls(events, ApprovalQueue(db, events))

    def runtime_event(self, event: RuntimeEvent) -> None:
        """Publish a runtime event that changes a server's phase or tools."""
        subject = f"McpServer/{event.server}"
        if event.kind is EventKind.TOOLS_CHANGED:
            self.events.publish(EventType.TOOLS_CHANGED, subject, message=event.message)
        elif event.kind in _PHASES:
            self.events.publish(
                EventType.PHASE_CHANGED, subject, phase=_PHASES[event.kind], event=event.kind.value,
                message=event.message,
            )  # fmt: skip

    def respond(self, approval_id: str, decision: Decision | str, *, by: str, reason: str = "") -> Approval:
        """Answer an approval request (raises ``ApprovalError`` when it takes no answer)."""
        # A person's words go to the state, the audit, the events and every screen: a value this
        # process resolved must not reach them (the CLI and the dashboard show what is stored).
        done = self.approvals.respond(approval_id, decision, by=redact(by), reason=redact(reason))
        if self.on_answer is not None and done.kind is ApprovalKind.PLAN:
            self.on_answer(done)
        return done
