"""Tool calls held in the approval queue: the supervisor's ``ToolGate`` for its endpoints.

A gated call (``McpServer.spec.toolApproval``; see ``naming.toolapproval`` for the modes)
becomes a pending ``tool`` request in the folder's queue — server, tool, redacted
arguments, who called, the rule, and an expiry ``toolApproval.timeoutMs`` ahead (50 s by
default, below OpenClaw's 60 s request timeout) — so ``clawplane approvals``, MCP
``approvals_respond`` and the dashboard list and answer it like a plan approval. The call
waits for the answer, reporting progress every ``progress_every`` seconds, and then:

- ``approved`` → it is forwarded to the server;
- ``rejected`` / ``expired`` → it fails with a tool error naming the request, who answered
  and why, and how to have the next call approved;
- the caller gone (it cancelled the call, its HTTP request disconnected, its session ended) →
  the request becomes ``cancelled`` with that cause, nothing is forwarded, and an answer
  given later is refused with "the caller is gone". A caller that leaves at the very moment
  its request is approved still gets nothing forwarded: the record is turned to ``cancelled``
  and says so.

Requests, answers and withdrawals are events and audit entries (the queue records them).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

import anyio

from clawplane.approvals.queue import ApprovalQueue
from clawplane.approvals.records import Approval, ApprovalError, ApprovalKind, Status
from clawplane.naming import REDACTED, is_sensitive_key
from clawplane.runtimes.proxy import Departure, GatedCall, Progress, Verdict
from clawplane.secrets import redact_data

__all__ = ["ToolCallApprovals", "redacted_arguments"]

PROGRESS_EVERY_S = 5.0
WENT_AWAY = "the caller went away before an answer"
"""Why a request was withdrawn when the proxy gave no cause."""
_MAX_TEXT = 500
_MAX_ARGUMENTS_JSON = 8000


def _bounded(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= _MAX_TEXT else value[:_MAX_TEXT] + f"… ({len(value)} characters)"
    if isinstance(value, Mapping):
        return {str(k): REDACTED if is_sensitive_key(str(k)) else _bounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_bounded(v) for v in value]
    return value


def redacted_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A call's arguments as an approver sees them: sensitive keys and known secrets redacted,
    long texts cut, and the whole bounded (a summary replaces arguments too large to show)."""
    shown = redact_data(_bounded(dict(arguments)))
    size = len(json.dumps(shown, default=str))
    if size > _MAX_ARGUMENTS_JSON:
        return {"_truncated": f"{size} bytes of arguments; keys: {', '.join(sorted(map(str, shown)))[:400]}"}
    return dict(shown)


def _how_to(approval_id: str) -> str:
    return (
        f"`clawplane approvals approve {approval_id}`, MCP approvals_respond "
        f'{{"id": "{approval_id}", "decision": "approve"}} on /mcp/_clawplane, or the dashboard\'s '
        "Approvals page"
    )


class ToolCallApprovals:
    """Holds gated tool calls in ``queue`` (see the module docstring)."""

    def __init__(self, queue: ApprovalQueue, *, progress_every: float = PROGRESS_EVERY_S) -> None:
        self.queue = queue
        self.progress_every = progress_every

    async def hold(self, call: GatedCall, progress: Progress) -> Verdict:
        """Request an approval for ``call`` and wait for it (cancellation or the caller's
        departure withdraws the request)."""
        approval = self.queue.request(
            ApprovalKind.TOOL,
            summary=f"tool call: {call.server}.{call.tool} by {call.caller}",
            subject={
                "server": call.server,
                "tool": call.tool,
                "arguments": redacted_arguments(call.arguments),
                "caller": call.caller,
                "endpoint": call.endpoint,
                "rule": call.rule,
                "mode": call.mode,
                "timeoutMs": round(call.timeout_s * 1000),
            },
            ttl_s=call.timeout_s,
            requested_by=call.caller,
        )
        waiting = f"waiting for approval {approval.id} (up to {call.timeout_s:g}s): {_how_to(approval.id)}"
        done: Approval | None = None
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_end_when_gone, call.departure, tg.cancel_scope)
                done = await self._wait(approval, call.timeout_s, progress, waiting)
                tg.cancel_scope.cancel()
        except BaseException:
            with anyio.CancelScope(shield=True):
                self._withdraw(approval.id, call.departure.reason or WENT_AWAY)
            raise
        if call.departure.gone or done is None:
            return self._gone(call, approval.id, call.departure.reason or WENT_AWAY)
        return self._verdict(call, done)

    async def _wait(self, approval: Approval, timeout: float, progress: Progress, waiting: str) -> Approval:
        start = anyio.current_time()
        await progress(0.0, timeout, waiting)
        while True:
            waited = anyio.current_time() - start
            current = await self.queue.wait(
                approval.id, timeout=max(0.0, min(self.progress_every, timeout - waited))
            )
            if not current.pending:
                return current
            waited = anyio.current_time() - start
            if waited >= timeout:
                # Past the wait but not yet past the stored expiry (seconds are stored whole).
                try:
                    return self.queue.set_status(approval.id, Status.EXPIRED, only_pending=True,
                                                 reason="no answer before it expired")  # fmt: skip
                except ApprovalError:
                    continue  # answered at this very moment: take that answer
            await progress(round(waited, 1), timeout, waiting)

    def _withdraw(self, approval_id: str, reason: str) -> None:
        # Answered (or expired) already: the call is gone either way.
        with contextlib.suppress(ApprovalError):
            self.queue.set_status(approval_id, Status.CANCELLED, only_pending=True, reason=reason)

    def _gone(self, call: GatedCall, approval_id: str, reason: str) -> Verdict:
        """The caller left while its call waited: nothing is forwarded, and the record says why."""
        done: Approval | None
        try:
            done = self.queue.set_status(approval_id, Status.CANCELLED, only_pending=True, reason=reason)
        except ApprovalError:
            current = done = self.queue.get(approval_id)
            if current is not None and current.status is Status.APPROVED:
                # Approved as the caller left: the approval reached no one, so the call is not run.
                done = self.queue.set_status(approval_id, Status.CANCELLED, reason=(
                    f"approved by {current.resolved_by or 'an approver'}, but {reason}; not run"
                ))  # fmt: skip
        status = done.status.value if done is not None else Status.CANCELLED.value
        message = (
            f'Tool call "{call.tool}" of MCP server "{call.server}" was not run: {reason} '
            f"(approval {approval_id} is {status}). Call it again if it is still wanted."
        )
        return Verdict(proceed=False, approval_id=approval_id, status=status, message=message)

    def _verdict(self, call: GatedCall, done: Approval) -> Verdict:
        """How an answered (or expired) request ends the call."""
        name = f'"{call.tool}" of MCP server "{call.server}"'
        if done.status is Status.APPROVED:
            return Verdict(proceed=True, approval_id=done.id, status=done.status.value)
        why = f": {done.reason}" if done.reason else ""
        if done.status is Status.REJECTED:
            message = (
                f"Tool call {name} was rejected by {done.resolved_by or 'an approver'}{why} "
                f"(approval {done.id}). It was not run; do not retry it unless the user asks."
            )
        elif done.status is Status.EXPIRED:
            message = (
                f"Tool call {name} was not approved within {call.timeout_s:g}s (approval {done.id} "
                f"expired), so it was not run. Call it again and answer the new request with "
                f"`clawplane approvals approve <id>` (`clawplane approvals list` shows it), MCP "
                "approvals_respond, or the dashboard; spec.toolApproval.timeoutMs sets the wait."
            )
        else:
            message = f"Tool call {name} was not run: approval {done.id} is {done.status.value}{why}"
        return Verdict(proceed=False, approval_id=done.id, status=done.status.value, message=message)


async def _end_when_gone(departure: Departure, scope: anyio.CancelScope) -> None:
    await departure.event.wait()
    scope.cancel()
