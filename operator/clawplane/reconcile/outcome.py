"""What one pass of the run loop came to: the result recorded in ``loop.json``, metrics and events."""

from __future__ import annotations

from enum import StrEnum


class PassOutcome(StrEnum):
    """The result of one reconcile pass (its value is what status, metrics and events show)."""

    APPLIED = "applied"
    """The plan was carried out and every action succeeded."""
    UNCHANGED = "unchanged"
    """The folder and the world agree: nothing to do."""
    FAILED = "failed"
    """The plan was carried out and some action failed (a server not Ready, a file not written)."""
    INVALID = "invalid"
    """The folder does not validate; the last good state is kept."""
    REFUSED = "refused"
    """The plan deletes most or all resources; it waits for ``clawplane apply --allow-mass-delete``."""
    RETRY = "retry"
    """The world moved between plan and apply; the pass goes round again at once."""
    SETTLING = "settling"
    """Resources vanished a moment ago; the pass waits for the folder to settle before deleting."""
    DEGRADED = "degraded"
    """The state database refused a write; servers keep running and the pass is retried."""
    ERROR = "error"
    """The pass failed unexpectedly (logged with its traceback); the loop goes on."""

    @property
    def ok(self) -> bool:
        """True when the world matches the folder after this pass."""
        return self in (PassOutcome.APPLIED, PassOutcome.UNCHANGED)

    @property
    def is_error(self) -> bool:
        """True when the pass counts as an error in the metrics."""
        return self in (PassOutcome.ERROR, PassOutcome.FAILED, PassOutcome.INVALID)
