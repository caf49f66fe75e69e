"""Approval requests as plain values: what is held, for how long, and how it was answered."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = ["Approval", "ApprovalError", "ApprovalKind", "Decision", "Status", "parse_time"]


class ApprovalKind(enum.StrEnum):
    """What waits for the answer."""

    PLAN = "plan"  # actions of a plan, held back from apply
    TOOL = "tool"  # one tool call through clawplane's endpoints


class Status(enum.StrEnum):
    """Where an approval request stands."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"  # a later commit changed what it held
    APPLIED = "applied"  # approved, and the held plan actions were applied
    CANCELLED = "cancelled"  # the tool call's caller gave up waiting

    @property
    def open(self) -> bool:
        """True while an answer can still change it."""
        return self is Status.PENDING


class Decision(enum.StrEnum):
    """An answer."""

    APPROVE = "approve"
    REJECT = "reject"


class ApprovalError(Exception):
    """An answer that cannot be taken (unknown id, already answered, expired); says why."""


def parse_time(text: str) -> datetime:
    """An ISO-8601 UTC time as stored (``...Z``)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


@dataclass(frozen=True, slots=True)
class Approval:
    """One approval request and its answer, as stored in the state database."""

    id: str
    kind: ApprovalKind
    status: Status
    summary: str
    subject: Mapping[str, Any]
    """Plan: ``actions`` (key, kind, name, action, rule, reasons, redacted diff, hashes). Tool: the call."""
    requested_at: str
    expires_at: str
    fingerprint: str = ""
    plan_hash: str = ""
    requested_by: str = ""
    resolved_at: str | None = None
    resolved_by: str | None = None
    reason: str = ""

    @property
    def pending(self) -> bool:
        """True while it waits for an answer."""
        return self.status is Status.PENDING

    def expired_at(self, now: datetime) -> bool:
        """Whether its time to be answered is over at ``now``."""
        return parse_time(self.expires_at) <= now

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (every text was redacted before it was stored)."""
        return {
            "id": self.id,
            "kind": self.kind.value,
            "status": self.status.value,
            "summary": self.summary,
            "subject": dict(self.subject),
            "fingerprint": self.fingerprint,
            "planHash": self.plan_hash,
            "requestedBy": self.requested_by,
            "requestedAt": self.requested_at,
            "expiresAt": self.expires_at,
            "resolvedAt": self.resolved_at,
            "resolvedBy": self.resolved_by,
            "reason": self.reason,
        }
