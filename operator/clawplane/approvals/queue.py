"""The pending-approval queue: requests, answers, expiry, and waiting for an answer.

One queue holds plan approvals (actions a commit makes that a Gateway rule holds back) and
tool-call approvals (a call to a gated tool through clawplane's endpoints). Requests and
answers are rows of the ``approvals`` table in the state database (0600), so the CLI, the
stdio MCP server, the supervisor and a dashboard all see one queue; each request and each
answer is also an event in the folder's event queue and an entry in the audit log.

An answer is taken only while a request is pending and not past its expiry; a request past
its expiry becomes ``expired`` the moment anyone looks at it. Waiters in this process wake
at once; answers written by another process are noticed within ``poll_interval`` seconds.
"""

from __future__ import annotations

import json
import secrets
import socket
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio

from clawplane.approvals.records import Approval, ApprovalError, ApprovalKind, Decision, Status, parse_time
from clawplane.events import EventQueue, EventType
from clawplane.secrets import redact, redact_data
from clawplane.state import StateDB, store

__all__ = ["ApprovalQueue"]

DEFAULT_POLL_S = 0.25
_LIMIT = 500


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _iso_after(moment: datetime) -> str:
    """``moment`` in whole seconds, rounded up: a deadline stored this way never comes early."""
    whole = moment.replace(microsecond=0)
    return _iso(whole if whole == moment else whole + timedelta(seconds=1))


def _row(r: sqlite3.Row) -> Approval:
    return Approval(
        id=r["id"],
        kind=ApprovalKind(r["kind"]),
        status=Status(r["status"]),
        summary=r["summary"],
        subject=json.loads(r["subject_json"]),
        requested_at=r["requested_at"],
        expires_at=r["expires_at"],
        fingerprint=r["fingerprint"],
        plan_hash=r["plan_hash"],
        requested_by=r["requested_by"],
        resolved_at=r["resolved_at"],
        resolved_by=r["resolved_by"],
        reason=r["reason"],
    )


def _no_answer(current: Approval) -> str:
    """Why ``current`` takes no answer, and what to do instead."""
    when = f" at {current.resolved_at}" if current.resolved_at else ""
    if current.kind is ApprovalKind.TOOL and current.status is Status.CANCELLED:
        why = f" ({current.reason})" if current.reason else ""
        return (
            f"approval {current.id} was cancelled{when}: the caller is gone{why}. The call was not run "
            "and nothing was forwarded to the server; it cannot be approved any more. If the call is still "
            "wanted, the caller must call the tool again and the new request be answered "
            "(`clawplane approvals list` shows it)"
        )
    who = f" by {current.resolved_by}" if current.resolved_by else ""
    return f"approval {current.id} is {current.status.value}{who}{when}; it takes no answer"


class ApprovalQueue:
    """The folder's approval requests (see the module docstring)."""

    def __init__(
        self,
        db: StateDB,
        events: EventQueue | None = None,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        poll_interval: float = DEFAULT_POLL_S,
    ) -> None:
        self.db = db
        self.events = events
        self.clock = clock
        self.poll_interval = poll_interval
        self._changed = anyio.Event()

    # -- reading -------------------------------------------------------------------------------
    def get(self, approval_id: str) -> Approval | None:
        """One request by id (expired first if its time is over)."""
        self.expire_due()
        rows = self.db.query("SELECT * FROM approvals WHERE id = ?", (approval_id.strip(),))
        return _row(rows[0]) if rows else None

    def find(
        self,
        *,
        statuses: Iterable[Status | str] | None = (Status.PENDING,),
        kind: ApprovalKind | str | None = None,
        limit: int = 100,
    ) -> list[Approval]:
        """Requests, newest first: by default the pending ones; ``statuses=None`` for all."""
        self.expire_due()
        sql, params = "SELECT * FROM approvals WHERE 1=1", list[object]()
        if statuses is not None:
            wanted = [Status(s).value for s in statuses]
            sql += f" AND status IN ({','.join('?' * len(wanted))})"
            params.extend(wanted)
        if kind is not None:
            sql += " AND kind = ?"
            params.append(ApprovalKind(kind).value)
        sql += " ORDER BY requested_at DESC, rowid DESC LIMIT ?"
        params.append(max(1, min(limit, _LIMIT)))
        return [_row(r) for r in self.db.query(sql, tuple(params))]

    def latest(self, *, kind: ApprovalKind, fingerprint: str) -> Approval | None:
        """The newest request of ``kind`` that held exactly ``fingerprint``."""
        self.expire_due()
        rows = self.db.query(
            "SELECT * FROM approvals WHERE kind = ? AND fingerprint = ? ORDER BY requested_at DESC, "
            "rowid DESC LIMIT 1",
            (kind.value, fingerprint),
        )
        return _row(rows[0]) if rows else None

    # -- writing -------------------------------------------------------------------------------
    def request(
        self,
        kind: ApprovalKind,
        *,
        summary: str,
        subject: Mapping[str, Any],
        ttl_s: float,
        requested_by: str = "clawplane",
        fingerprint: str = "",
        plan_hash: str = "",
    ) -> Approval:
        """A new pending request that can be answered for ``ttl_s`` seconds."""
        now = self.clock()
        approval = Approval(
            id=f"apr-{secrets.token_hex(4)}",
            kind=kind,
            status=Status.PENDING,
            summary=redact(summary),
            subject=redact_data(json.loads(json.dumps(dict(subject), default=str))),
            requested_at=_iso(now),
            expires_at=_iso_after(now + timedelta(seconds=ttl_s)),
            fingerprint=fingerprint,
            plan_hash=plan_hash,
            requested_by=requested_by,
        )
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO approvals(id, kind, status, fingerprint, plan_hash, summary, subject_json, "
                "requested_by, requested_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (approval.id, kind.value, approval.status.value, fingerprint, plan_hash, approval.summary,
                 json.dumps(approval.subject, sort_keys=True), requested_by, approval.requested_at,
                 approval.expires_at),
            )  # fmt: skip
        self._record(approval, EventType.APPROVAL_REQUESTED, "requested", requested_by)
        return approval

    def respond(self, approval_id: str, decision: Decision | str, *, by: str, reason: str = "") -> Approval:
        """Approve or reject a pending request.

        Raises:
            ApprovalError: No such request, it was answered already, or it expired.
        """
        decision = Decision(decision)
        status = Status.APPROVED if decision is Decision.APPROVE else Status.REJECTED
        current = self.get(approval_id)
        if current is None:
            raise ApprovalError(
                f"no approval request {approval_id!r} (`clawplane approvals list` shows them)"
            )
        if not current.pending:
            raise ApprovalError(_no_answer(current))
        return self._resolve(current, status, by=by, reason=reason)

    def set_status(
        self,
        approval_id: str,
        status: Status,
        *,
        by: str = "clawplane",
        reason: str = "",
        only_pending: bool = False,
    ) -> Approval:
        """Close a request on clawplane's own account (superseded, applied, cancelled).

        Raises:
            ApprovalError: No such request, or ``only_pending`` and it was answered meanwhile.
        """
        current = self.get(approval_id)
        if current is None:
            raise ApprovalError(f"no approval request {approval_id!r}")
        return self._resolve(current, status, by=by, reason=reason, only_pending=only_pending)

    def expire_due(self) -> list[Approval]:
        """Mark every pending request past its expiry as expired; returns those."""
        now = _iso(self.clock())
        rows = self.db.query("SELECT * FROM approvals WHERE status = 'pending' AND expires_at <= ?", (now,))
        expired = []
        for row in rows:
            approval = _row(row)
            done = self._write(approval, Status.EXPIRED, by="clawplane", reason="no answer before it expired")
            if done is not None:
                expired.append(done)
        return expired

    def _resolve(
        self, current: Approval, status: Status, *, by: str, reason: str, only_pending: bool = True
    ) -> Approval:
        done = self._write(current, status, by=by, reason=reason, only_pending=only_pending)
        if done is None:  # answered by someone else in between
            fresh = self.get(current.id)
            state = fresh.status.value if fresh is not None else "gone"
            raise ApprovalError(f"approval {current.id} was answered meanwhile ({state})")
        return done

    def _write(
        self, current: Approval, status: Status, *, by: str, reason: str, only_pending: bool = True
    ) -> Approval | None:
        now = _iso(self.clock())
        reason = redact(reason.strip())[:2000]
        with self.db.transaction() as conn:
            guard = " AND status = 'pending'" if only_pending else ""
            cur = conn.execute(
                "UPDATE approvals SET status = ?, resolved_at = ?, resolved_by = ?, reason = ? "
                f"WHERE id = ?{guard}",
                (status.value, now, by, reason, current.id),
            )
            if cur.rowcount == 0:
                return None
        done = replace(current, status=status, resolved_at=now, resolved_by=by, reason=reason)
        self._record(done, EventType.APPROVAL_RESOLVED, status.value, by)
        changed, self._changed = self._changed, anyio.Event()
        changed.set()
        return done

    def _record(self, approval: Approval, event: str, outcome: str, who: str) -> None:
        subject = approval.subject
        actions = [{"key": a.get("key"), "action": a.get("action")} for a in subject.get("actions", ())]
        if not actions:
            actions = [{"key": f"tool/{subject.get('server')}/{subject.get('tool')}", "action": "call"}]
        detail = f"{approval.id}: {approval.summary}" + (f" — {approval.reason}" if approval.reason else "")
        store.audit_event(
            self.db, user=who, host=socket.gethostname(), plan_hash=approval.plan_hash, actions=actions,
            outcome=f"approval-{outcome}", detail=detail,
        )  # fmt: skip
        if self.events is not None:
            self.events.publish(
                event, approval.id, kind=approval.kind.value, status=approval.status.value,
                summary=approval.summary, by=who, reason=approval.reason,
            )  # fmt: skip

    # -- waiting -------------------------------------------------------------------------------
    async def wait(self, approval_id: str, *, timeout: float) -> Approval:
        """The request once it is no longer pending, or as it is after ``timeout`` seconds
        (expired by then when its expiry has passed)."""
        with anyio.move_on_after(max(0.0, timeout)):
            while True:
                changed = self._changed
                current = self.get(approval_id)
                if current is None or not current.pending:
                    break
                deadline = (parse_time(current.expires_at) - self.clock()).total_seconds()
                with anyio.move_on_after(max(0.01, min(self.poll_interval, deadline))):
                    await changed.wait()
        current = self.get(approval_id)
        if current is None:
            raise ApprovalError(f"approval request {approval_id!r} is gone")
        return current
