"""Status documents: observedGeneration, conditions, refusal of a new generation, minimal patches."""

from __future__ import annotations

from typing import Any

from clawplane.k8s.adapter.materialize import Problem
from clawplane.k8s.adapter.statuses import build_status, status_patch, with_condition
from clawplane.reconcile.conditions import Cond
from clawplane.state import ResourceRecord, ToolRecord


def record() -> ResourceRecord:
    conds = [
        {
            "type": t,
            "status": "True",
            "reason": "R",
            "message": "",
            "observedGeneration": 9,
            "lastTransitionTime": "t0",
        }
        for t in ("Accepted", "ResolvedRefs", "Programmed", "ToolsDiscovered", "Ready")
    ]
    return ResourceRecord(
        key="McpServer/a",
        kind="McpServer",
        name="a",
        config_hash="abc",
        generation=9,
        observed_generation=9,
        spec={},
        phase="Ready",
        conditions=conds,
        status={"toolCount": 1, "restarts": 0},
    )


def cr(generation: int, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"kind": "McpServer", "metadata": {"name": "a", "generation": generation}, "status": status}


TOOLS = [ToolRecord("get_time", "a__get_time", "h", "")]


def test_ready_status_uses_the_cluster_generation() -> None:
    s = build_status(cr(4), record(), problem=None, accepted_generation=4, secret_problems=[], tools=TOOLS)
    assert s["observedGeneration"] == 4 and s["phase"] == "Ready" and s["configHash"] == "abc"
    assert s["tools"] == ["a__get_time"]
    assert {c["type"] for c in s["conditions"]} == {
        "Accepted",
        "ResolvedRefs",
        "Programmed",
        "ToolsDiscovered",
        "Ready",
    }
    assert all(c["observedGeneration"] == 4 and c["lastTransitionTime"] for c in s["conditions"])


def test_refused_generation_reports_the_running_one() -> None:
    s = build_status(
        cr(5),
        record(),
        problem=Problem("Invalid", "spec.bogus: unknown"),
        accepted_generation=4,
        secret_problems=[],
        tools=TOOLS,
    )
    assert s["observedGeneration"] == 4
    accepted = next(c for c in s["conditions"] if c["type"] == "Accepted")
    assert (
        accepted["status"] == "False"
        and accepted["reason"] == "Invalid"
        and accepted["observedGeneration"] == 5
    )
    assert "spec.bogus" in s["message"]


def test_never_accepted_is_invalid_and_not_ready() -> None:
    s = build_status(
        cr(1), None, problem=Problem("Invalid", "x"), accepted_generation=None, secret_problems=[], tools=[]
    )
    assert s["phase"] == "Invalid"
    assert {c["type"]: c["status"] for c in s["conditions"]}["Ready"] == "False"


def test_missing_secret_is_a_resolved_refs_failure() -> None:
    s = build_status(
        cr(1),
        record(),
        problem=None,
        accepted_generation=1,
        secret_problems=["Secret ns/s does not exist"],
        tools=[],
    )
    refs = next(c for c in s["conditions"] if c["type"] == "ResolvedRefs")
    assert refs["status"] == "False" and refs["reason"] == "SecretNotFound"


def test_transition_times_survive_and_equal_status_needs_no_patch() -> None:
    first = build_status(
        cr(1), record(), problem=None, accepted_generation=1, secret_problems=[], tools=TOOLS
    )
    again = build_status(
        cr(1, first), record(), problem=None, accepted_generation=1, secret_problems=[], tools=TOOLS
    )
    assert status_patch(first, again) is None
    assert status_patch({"message": "old", **first}, again) == {"message": None}


def test_a_held_create_is_accepted_and_waits_rather_than_invalid() -> None:
    never = build_status(cr(1), None, problem=None, accepted_generation=1, secret_problems=[], tools=[])
    waiting = Cond("Approved", False, "AwaitingApproval", "create McpServer/a waits for approval apr-1")
    s = with_condition(never, cr(1), waiting)
    conds = {c["type"]: (c["status"], c["reason"]) for c in s["conditions"]}
    assert s["phase"] == "Held" and s["message"] == waiting.message
    assert conds["Accepted"] == ("True", "Valid") and conds["Approved"] == ("False", "AwaitingApproval")
    assert conds["Programmed"] == conds["Ready"] == ("False", "AwaitingApproval")
    running = with_condition(build_status(cr(9), record(), problem=None, accepted_generation=9,
                                          secret_problems=[], tools=TOOLS), cr(9), waiting)  # fmt: skip
    assert running["phase"] == "Ready" and {c["type"]: c["status"] for c in running["conditions"]}["Approved"] == "False"
