"""Plan approval rules, the approval queue, and the per-pass hold decisions, on a real state database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from tests.unit.engine.test_planner import HEAD, applied, compile_folder, plan

from clawplane.approvals import (
    ApprovalError,
    ApprovalKind,
    ApprovalQueue,
    Decision,
    Status,
    decide,
    held_actions,
    mark_applied,
    rules_of,
)
from clawplane.events import EventQueue
from clawplane.state import StateDB, store

GATEWAY = HEAD + "kind: Gateway\nmetadata: {{name: default}}\nspec:\n  approvals:\n    rules:\n{rules}"
DELETES = "      - {name: hold-deletes, kinds: [McpServer], actions: [delete]}\n"
SERVER = HEAD + "kind: McpServer\nmetadata:\n  name: {name}\n  labels: {labels}\nspec:\n  command: {command}\n"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def server(name: str, command: str = "python3", labels: str = "{}") -> str:
    return SERVER.format(name=name, command=command, labels=labels)


def rules_and_plan(tmp_path: Path, rules: str, before: dict[str, str], after: dict[str, str]):  # type: ignore[no-untyped-def]
    folder = tmp_path / "folder"
    folder.mkdir(exist_ok=True)
    desired_before = compile_folder(folder, {"gw.yaml": GATEWAY.format(rules=rules), **before})
    observed = applied(desired_before)
    desired = compile_folder(folder, {"gw.yaml": GATEWAY.format(rules=rules), **after})
    p = plan(desired, observed)
    return held_actions(p, desired, observed, rules_of(desired.gateway)), p


def test_a_rule_holds_exactly_the_actions_it_selects(tmp_path: Path) -> None:
    held, p = rules_and_plan(tmp_path, DELETES, {"a.yaml": server("a"), "b.yaml": server("b")},
                             {"a.yaml": server("a", "node"), "c.yaml": server("c")})  # fmt: skip
    assert [(h.change.key, h.change.action.value, h.rule) for h in held] == [
        ("McpServer/b", "delete", "hold-deletes")
    ]
    assert {c.key for c in p.actionable} >= {"McpServer/a", "McpServer/b", "McpServer/c"}


def test_field_rules_match_the_field_and_below_and_never_a_delete(tmp_path: Path) -> None:
    rules = "      - {fields: [spec.command]}\n      - {fields: [spec.env], name: env}\n"
    env = HEAD + "kind: McpServer\nmetadata: {name: e}\nspec:\n  command: x\n  env: {A: '1'}\n"
    env2 = env.replace("A: '1'", "A: '2'")
    held, _ = rules_and_plan(tmp_path, rules, {"a.yaml": server("a"), "e.yaml": env, "d.yaml": server("d")},
                             {"a.yaml": server("a", "node"), "e.yaml": env2})  # fmt: skip
    assert [(h.change.key, h.rule) for h in held] == [("McpServer/a", "rules[0]"), ("McpServer/e", "env")]


def test_label_selectors_use_the_last_applied_labels_for_a_delete(tmp_path: Path) -> None:
    rules = "      - {selector: {matchLabels: {tier: prod}}}\n"
    prod = server("p", labels="{tier: prod}")
    dev = server("d", labels="{tier: dev}")
    folder = tmp_path / "f"
    folder.mkdir()
    desired = compile_folder(folder, {"gw.yaml": GATEWAY.format(rules=rules), "p.yaml": prod, "d.yaml": dev})
    observed = applied(desired)
    # What the applier records: the labels, so a delete can still be matched.
    for key in ("McpServer/p", "McpServer/d"):
        record = observed.resources[key]
        record.status["labels"] = dict(desired.resources[key].resource.metadata.labels)
    gone = compile_folder(folder, {"gw.yaml": GATEWAY.format(rules=rules)})
    held = held_actions(plan(gone, observed), gone, observed, rules_of(gone.gateway))
    assert [h.change.key for h in held] == ["McpServer/p"]


def test_repairs_the_loop_makes_on_its_own_are_never_held(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    files = {"gw.yaml": GATEWAY.format(rules="      - {kinds: [McpServer]}\n"), "a.yaml": server("a")}
    desired = compile_folder(folder, files)
    crashed = applied(desired, phase="crashed")
    p = plan(desired, crashed)
    assert [c.action.value for c in p.actionable if c.key == "McpServer/a"] == ["replace"]
    assert held_actions(p, desired, crashed, rules_of(desired.gateway)) == []


def test_the_queue_takes_one_answer_and_records_it_everywhere(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    events = EventQueue(db)
    queue = ApprovalQueue(db, events)
    request = queue.request(ApprovalKind.TOOL, summary="call notes.add_note", subject={"server": "notes",
                            "tool": "add_note"}, ttl_s=60)  # fmt: skip
    assert [a.id for a in queue.find()] == [request.id]
    done = queue.respond(request.id, Decision.APPROVE, by="cli:alice", reason="ok")
    assert done.status is Status.APPROVED and done.resolved_by == "cli:alice"
    with pytest.raises(ApprovalError, match="is approved by cli:alice"):
        queue.respond(request.id, "reject", by="cli:bob")
    with pytest.raises(ApprovalError, match="no approval request"):
        queue.respond("apr-nope", "approve", by="cli:bob")
    assert queue.find() == []
    assert [e.type for e in events.page(0).events] == ["approval_requested", "approval_resolved"]
    audit = [(a.user, a.outcome) for a in reversed(store.audit_entries(db))]
    assert audit == [("clawplane", "approval-requested"), ("cli:alice", "approval-approved")]


def test_a_request_expires_when_its_time_is_over_and_takes_no_answer(tmp_path: Path) -> None:
    clock = Clock()
    queue = ApprovalQueue(StateDB.open(tmp_path), clock=clock)
    request = queue.request(ApprovalKind.PLAN, summary="plan: delete McpServer/a", subject={}, ttl_s=60)
    clock.now += timedelta(seconds=61)
    with pytest.raises(ApprovalError, match="is expired"):
        queue.respond(request.id, "approve", by="cli:alice")
    expired = queue.get(request.id)
    assert expired is not None and expired.status is Status.EXPIRED and expired.resolved_by == "clawplane"
    outcomes = [a.outcome for a in store.audit_entries(queue.db)]
    assert "approval-expired" in outcomes


def test_a_waiter_wakes_on_an_answer_and_sees_expiry(tmp_path: Path) -> None:
    queue = ApprovalQueue(StateDB.open(tmp_path), poll_interval=30)
    request = queue.request(ApprovalKind.TOOL, summary="t", subject={}, ttl_s=600)

    async def main() -> Status:
        async with anyio.create_task_group() as tg:
            async def answer() -> None:
                await anyio.sleep(0)
                queue.respond(request.id, "reject", by="mcp:cli", reason="no")

            tg.start_soon(answer)
            with anyio.fail_after(20):  # woken by the answer, not by the 30 s poll
                return (await queue.wait(request.id, timeout=25)).status

    assert anyio.run(main) is Status.REJECTED
    short = queue.request(ApprovalKind.TOOL, summary="t", subject={}, ttl_s=0.05)
    assert anyio.run(lambda: queue.wait(short.id, timeout=10)).status is Status.EXPIRED


def test_hold_decisions_follow_the_folder_and_the_answers(tmp_path: Path) -> None:
    clock = Clock()
    queue = ApprovalQueue(StateDB.open(tmp_path / "state"), clock=clock)
    held, p = rules_and_plan(tmp_path, DELETES, {"a.yaml": server("a"), "b.yaml": server("b")}, {"a.yaml": server("a")})
    first = decide(queue, held, plan_hash=p.plan_hash(), requested_by="loop")
    assert first.new and first.request is not None and first.waiting_keys == {"McpServer/b"}
    assert first.request.subject["actions"][0]["rule"] == "hold-deletes"
    again = decide(queue, held, plan_hash=p.plan_hash(), requested_by="loop")
    assert not again.new and again.request is not None and again.request.id == first.request.id

    queue.respond(first.request.id, "approve", by="cli:alice", reason="b is retired (TICKET-7)")
    released = decide(queue, held, plan_hash=p.plan_hash(), requested_by="loop")
    assert released.waiting == () and [h.change.key for h in released.released] == ["McpServer/b"]
    mark_applied(queue, released)
    applied = queue.get(first.request.id)
    assert applied is not None and applied.status is Status.APPLIED
    assert applied.resolved_by == "cli:alice"
    assert applied.reason == "b is retired (TICKET-7); the approved actions were applied"

    # A second delete, rejected: it stays held, and is not asked again.
    held2, p2 = rules_and_plan(tmp_path, DELETES, {"c.yaml": server("c"), "d.yaml": server("d")}, {"c.yaml": server("c")})
    second = decide(queue, held2, plan_hash=p2.plan_hash(), requested_by="loop")
    assert second.request is not None
    queue.respond(second.request.id, "reject", by="cli:alice", reason="keep d")
    still = decide(queue, held2, plan_hash=p2.plan_hash(), requested_by="loop")
    assert not still.new and still.request is not None and still.request.status is Status.REJECTED
    assert still.waiting_keys == {"McpServer/d"}

    # The folder changes what is held: the standing request is superseded by a new one.
    held3, p3 = rules_and_plan(tmp_path, DELETES, {"c.yaml": server("c"), "d.yaml": server("d")}, {})
    third = decide(queue, held3, plan_hash=p3.plan_hash(), requested_by="loop")
    assert third.new and third.request is not None and third.waiting_keys == {"McpServer/c", "McpServer/d"}
    clock.now += timedelta(days=2)
    expired = decide(queue, held3, plan_hash=p3.plan_hash(), requested_by="loop")
    assert not expired.new and expired.request is not None and expired.request.status is Status.EXPIRED

    approved = decide(queue, held3, plan_hash=p3.plan_hash(), requested_by="loop", approve_as="cli:bob")
    assert approved.waiting == () and {h.change.key for h in approved.released} == {"McpServer/c", "McpServer/d"}
    assert approved.approved[-1].resolved_by == "cli:bob"
