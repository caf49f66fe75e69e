"""``clawplane approvals list|show|approve|reject``: the folder's pending approvals, and answers.

Plan approvals hold the actions of a plan that a Gateway rule (``spec.approvals.rules``)
selects; tool approvals hold one call to a gated tool (``McpServer.spec.toolApproval``).
An answer goes through the running supervisor (so an approved plan is applied at once) or,
when none runs, into the state database for the next pass. Every answer is audited.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer

from clawplane.cli.common import FolderArg, OutDirOpt, StateDirOpt, fail, workspace
from clawplane.cli.console import EXIT_INVALID, out
from clawplane.secrets import redact, redact_data
from clawplane.state import StateDB, StateError

if TYPE_CHECKING:
    from clawplane.approvals import Approval

approvals_app = typer.Typer(
    help="Approval requests of held plan actions and tool calls: list, show, approve, reject.",
    no_args_is_help=True,
)

IdArg = Annotated[str, typer.Argument(help="The request's id (apr-…), from `clawplane approvals list`.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
ReasonOpt = Annotated[str, typer.Option("--reason", "-m", help="Why (kept in the audit log).")]


def _db(folder: Path, state_dir: Path | None, out_dir: Path | None) -> StateDB:
    try:
        return StateDB.open(workspace(folder, state_dir, out_dir).state_dir, create=False)
    except StateError as exc:
        fail(str(exc))
        raise AssertionError("unreachable") from None


def _queue(db: StateDB) -> Any:
    from clawplane.approvals import ApprovalQueue
    from clawplane.events import EventQueue

    return ApprovalQueue(db, EventQueue(db))


@approvals_app.command("list")
def approvals_list(
    folder: FolderArg,
    every: Annotated[bool, typer.Option("--all", "-a", help="Answered and expired ones too.")] = False,
    as_json: JsonOpt = False,
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """List pending approval requests (newest first); --all lists the answered ones too."""
    queue = _queue(_db(folder, state_dir, out_dir))
    found: list[Approval] = queue.find(statuses=None if every else ("pending",))
    if as_json:
        out.print(json.dumps(redact_data([a.to_dict() for a in found]), indent=2), markup=False)
        return
    if not found:
        out.print("no pending approvals" if not every else "no approvals", markup=False)
        return
    for a in found:
        answered = f" by {a.resolved_by}" if a.resolved_by else ""
        until = f", expires {a.expires_at}" if a.pending else answered
        out.print(f"{a.id}  {a.status.value:<10} {a.kind.value:<4} {a.summary}{until}", markup=False)


@approvals_app.command("show")
def approvals_show(
    folder: FolderArg, approval_id: IdArg, as_json: JsonOpt = False,
    state_dir: StateDirOpt = None, out_dir: OutDirOpt = None,
) -> None:  # fmt: skip
    """Show one request: what it holds (with the redacted diff) and how it was answered."""
    found = _queue(_db(folder, state_dir, out_dir)).get(approval_id)
    if found is None:
        fail(f"no approval request {approval_id!r} (`clawplane approvals list {folder} --all` shows them)")
        return
    if as_json:
        out.print(json.dumps(redact_data(found.to_dict()), indent=2), markup=False)
        return
    _print(found)


def _say(text: str) -> None:
    # Stored answers were redacted by the process that knew the values; this one passes its own.
    out.print(redact(text), markup=False)


def _print(a: Approval) -> None:
    _say(f"{a.id}: {a.summary}")
    _say(f"  status: {a.status.value} ({a.kind.value}); requested {a.requested_at} by {a.requested_by}, "
         f"expires {a.expires_at}")  # fmt: skip
    if a.resolved_at:
        why = f": {a.reason}" if a.reason else ""
        if a.status.value == "cancelled":
            _say(f"  cancelled {a.resolved_at}{why}")  # no one answered it: its caller went away
        else:
            _say(f"  answered {a.resolved_at} by {a.resolved_by}{why}")
    for action in a.subject.get("actions", ()):
        _say(f"  {action['action']} {action['key']} (rule {action['rule']})")
        for reason in action.get("reasons", ()):
            _say(f"      {reason}")
        for change in action.get("diff", ()):
            before, after = json.dumps(change.get("before")), json.dumps(change.get("after"))
            _say(f"      {change['op']} {change['path']}: {before} -> {after}")
    if a.kind.value == "tool":
        s = a.subject
        _say(f"  call {s.get('server')}.{s.get('tool')} by {s.get('caller')} at {s.get('endpoint')}")
        _say(f"  arguments: {json.dumps(s.get('arguments'), ensure_ascii=False)}")


def _answer(folder: Path, approval_id: str, decision: str, reason: str,
            state_dir: Path | None, out_dir: Path | None) -> None:  # fmt: skip
    from clawplane.approvals import ApprovalError
    from clawplane.reconcile.answers import respond
    from clawplane.reconcile.applier import current_user

    ws = workspace(folder, state_dir, out_dir)
    db = _db(folder, state_dir, out_dir)
    try:
        by = f"cli:{current_user()}"
        done = anyio.run(lambda: respond(ws, db, approval_id, decision, by=by, reason=reason))
    except ApprovalError as exc:
        fail(str(exc), EXIT_INVALID)
        return
    out.print(f"{done.id}: {done.status.value} ({done.summary})", markup=False)
    if done.kind.value == "plan" and decision == "approve":
        out.print("a watching supervisor (`clawplane run`) applies it now; otherwise `clawplane apply "
                  f"{folder}` does", markup=False)  # fmt: skip


@approvals_app.command("approve")
def approvals_approve(
    folder: FolderArg, approval_id: IdArg, reason: ReasonOpt = "",
    state_dir: StateDirOpt = None, out_dir: OutDirOpt = None,
) -> None:  # fmt: skip
    """Approve a pending request: the held plan actions are applied, or the held tool call runs."""
    _answer(folder, approval_id, "approve", reason, state_dir, out_dir)


@approvals_app.command("reject")
def approvals_reject(
    folder: FolderArg, approval_id: IdArg, reason: ReasonOpt = "",
    state_dir: StateDirOpt = None, out_dir: OutDirOpt = None,
) -> None:  # fmt: skip
    """Reject a pending request: the held plan actions stay unapplied, the held tool call fails."""
    _answer(folder, approval_id, "reject", reason, state_dir, out_dir)
