"""The tool-call gate over a real queue: what an approver sees of the arguments, and how a wait ends."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from clawplane.approvals import (
    ApprovalError,
    ApprovalKind,
    ApprovalQueue,
    Decision,
    Status,
    ToolCallApprovals,
    redacted_arguments,
)
from clawplane.events import EventQueue
from clawplane.runtimes.proxy.gate import GatedCall
from clawplane.secrets import KNOWN
from clawplane.state import StateDB, store

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _call(timeout_s: float = 30.0, **arguments: object) -> GatedCall:
    return GatedCall("notes", "write_note", arguments, "agent:bot", "write_*", "prompt", timeout_s, "/mcp/notes")


def test_arguments_lose_sensitive_keys_known_secrets_and_bulk() -> None:
    KNOWN.add("resolved-secret-value-77")
    shown = redacted_arguments({
        "title": "x" * 600,
        "auth": {"password": "hunter2", "note": "uses resolved-secret-value-77 inside"},
        "items": [{"apiKey": "k"}, 3],
    })  # fmt: skip
    assert shown["title"].startswith("x" * 500) and shown["title"].endswith("(600 characters)")
    assert shown["auth"] == {"password": "<redacted>", "note": "uses <redacted> inside"}
    assert shown["items"] == [{"apiKey": "<redacted>"}, 3]
    huge = redacted_arguments({f"k{i}": "v" * 400 for i in range(40)})
    assert list(huge) == ["_truncated"] and "bytes of arguments; keys: k0, k1" in huge["_truncated"]


async def _progress(done: float, total: float | None, message: str) -> None:
    return None


async def test_a_cancelled_wait_withdraws_the_request_and_audits_it(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    queue = ApprovalQueue(db, EventQueue(db))
    gate = ToolCallApprovals(queue)
    with anyio.move_on_after(0.3):
        await gate.hold(_call(), _progress)
    (withdrawn,) = queue.find(statuses=None, kind=ApprovalKind.TOOL)
    assert withdrawn.status is Status.CANCELLED and withdrawn.subject["endpoint"] == "/mcp/notes"
    outcomes = [e.outcome for e in store.audit_entries(db, limit=10)]
    assert outcomes[:2] == ["approval-cancelled", "approval-requested"]


async def test_the_wait_is_bounded_by_the_timeout_and_the_answer_ends_it(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    queue = ApprovalQueue(db, EventQueue(db))
    gate = ToolCallApprovals(queue, progress_every=0.05)
    with anyio.fail_after(10):
        expired = await gate.hold(_call(timeout_s=0.2), _progress)
    assert (expired.proceed, expired.status) == (False, "expired")
    assert "not approved within 0.2s" in expired.message

    seen: list[float] = []

    async def answer_on_first_progress(done: float, total: float | None, message: str) -> None:
        seen.append(done)
        if len(seen) == 1:
            (pending,) = queue.find(kind=ApprovalKind.TOOL)
            queue.respond(pending.id, Decision.REJECT, by="ops", reason="no")

    with anyio.fail_after(10):
        rejected = await gate.hold(_call(), answer_on_first_progress)
    assert (rejected.proceed, rejected.status) == (False, "rejected")
    assert "rejected by ops: no" in rejected.message and rejected.approval_id in rejected.message


async def test_a_caller_that_leaves_withdraws_its_request_and_a_later_answer_is_refused(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    queue = ApprovalQueue(db, EventQueue(db))
    gate = ToolCallApprovals(queue, progress_every=0.05)
    call = _call()

    async def leave_on_first_progress(done: float, total: float | None, message: str) -> None:
        call.departure.leave("the caller's HTTP request disconnected before an answer")

    with anyio.fail_after(10):
        verdict = await gate.hold(call, leave_on_first_progress)
    assert (verdict.proceed, verdict.status) == (False, "cancelled")
    assert "was not run: the caller's HTTP request disconnected" in verdict.message
    (withdrawn,) = queue.find(statuses=None, kind=ApprovalKind.TOOL)
    assert withdrawn.status is Status.CANCELLED
    assert withdrawn.reason == "the caller's HTTP request disconnected before an answer"
    with pytest.raises(ApprovalError) as refused:
        queue.respond(withdrawn.id, Decision.APPROVE, by="ops")
    said = str(refused.value)
    assert f"approval {withdrawn.id} was cancelled at " in said and "the caller is gone" in said
    assert "nothing was forwarded" in said and "call the tool again" in said


async def test_an_approval_given_as_the_caller_leaves_runs_nothing_and_says_so(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    queue = ApprovalQueue(db, EventQueue(db))
    gate = ToolCallApprovals(queue, progress_every=0.05)
    call = _call()

    async def approve_and_leave(done: float, total: float | None, message: str) -> None:
        (pending,) = queue.find(kind=ApprovalKind.TOOL)
        queue.respond(pending.id, Decision.APPROVE, by="ops")
        call.departure.leave("the caller went away (session 1234abcd ended before an answer)")

    with anyio.fail_after(10):
        verdict = await gate.hold(call, approve_and_leave)
    assert (verdict.proceed, verdict.status) == (False, "cancelled")
    (record,) = queue.find(statuses=None, kind=ApprovalKind.TOOL)
    assert record.status is Status.CANCELLED
    assert record.reason == "approved by ops, but the caller went away (session 1234abcd ended before an answer); not run"
