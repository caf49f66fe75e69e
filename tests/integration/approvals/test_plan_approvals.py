"""Plan approvals under ``clawplane run``: a rule holds McpServer deletes until someone answers.

The folder's supervisor watches the folder. A commit deleting a server leaves it running and
opens one pending request with the diff; approving it removes the server; a second delete,
rejected, stays running and is not asked again; a request that nobody answers in time is
reported as expired and holds on. Every step is in the audit log and the event queue.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import psutil
import pytest
from tests.integration.approvals.conftest import approvals
from tests.integration.runloop.conftest import Loop, wait_for


def _pending(loop: Loop) -> list[dict[str, Any]] | None:
    found = approvals(loop.cli, loop.folder)
    return found or None


def _running(loop: Loop, name: str) -> int | None:
    entry = loop.observed().get(f"McpServer/{name}")
    pid = entry.get("pid") if entry and entry.get("phase") == "Ready" else None
    return pid if pid and psutil.pid_exists(pid) else None


def _one(loop: Loop, approval_id: str) -> dict[str, Any]:
    return dict(loop.cli.json("approvals", "show", str(loop.folder), approval_id, "--json"))


def _gateway_servers(loop: Loop) -> dict[str, Any]:
    return dict(json.loads((loop.state / "out" / "openclaw.json").read_text())["mcp"]["servers"])


def _rows(loop: Loop, sql: str) -> list[sqlite3.Row]:
    with sqlite3.connect(loop.state / "state.db") as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute(sql).fetchall()


# ~60 s on an idle 2-core box (about 40 CLI calls of ~1 s and four server starts); several
# times that while other tests load both cores.
@pytest.mark.timeout(600)
def test_held_deletes_wait_for_an_answer_and_every_answer_is_audited(guarded: Loop) -> None:
    loop, cli, folder = guarded, guarded.cli, guarded.folder
    two = _running(loop, "notes-two")
    assert two is not None

    # A commit deleting a server: it keeps running, one request holds the delete with its diff.
    (folder / "notes-two.yaml").unlink()
    (pending,) = wait_for("a pending approval", lambda: _pending(loop), timeout=60)
    (action,) = pending["subject"]["actions"]
    assert (action["action"], action["key"], action["rule"]) == ("delete", "McpServer/notes-two", "server-deletes")
    assert {"path": "spec.command", "op": "removed", "before": "python3", "after": None} in action["diff"]
    loop.wait_settled(after=loop.reconciles())
    assert _running(loop, "notes-two") == two
    assert "notes-two" in _gateway_servers(loop)  # nothing of a held action happens, not even in configs
    assert loop.loop_status()["held"]["approval"] == pending["id"]
    shown = cli("approvals", "show", str(folder), pending["id"])
    assert "delete McpServer/notes-two (rule server-deletes)" in shown.stdout
    assert "removed spec.command: \"python3\" -> null" in shown.stdout

    # Approved: the loop applies the delete at once, and the request is closed as applied.
    approved = cli("approvals", "approve", str(folder), pending["id"], "--reason", "retired")
    assert approved.returncode == 0 and f"{pending['id']}: approved" in approved.stdout
    wait_for("notes-two to be deleted", lambda: "McpServer/notes-two" not in loop.observed(), timeout=60)
    wait_for("the old process to exit", lambda: not psutil.pid_exists(two) or None, timeout=30)
    assert "notes-two" not in _gateway_servers(loop)
    assert wait_for("applied", lambda: _one(loop, pending["id"])["status"] == "applied" or None)
    again = cli("approvals", "approve", str(folder), pending["id"])
    assert again.returncode == 1 and "is applied" in again.stdout

    # A second delete, rejected: the server stays and nobody is asked again.
    three = _running(loop, "notes-three")
    (folder / "notes-three.yaml").unlink()
    (second,) = wait_for("a second pending approval", lambda: _pending(loop), timeout=60)
    assert second["id"] != pending["id"]
    rejected = cli("approvals", "reject", str(folder), second["id"], "-m", "still in use")
    assert rejected.returncode == 0
    after = loop.reconciles()
    loop.wait_settled(after=after + 1)
    assert _running(loop, "notes-three") == three
    assert approvals(cli, folder) == []
    assert _one(loop, second["id"])["status"] == "rejected"

    # Nobody answers in time: the request expires, is reported, and the server stays.
    brief = _running(loop, "brief-one")
    (folder / "brief-one.yaml").unlink()
    expired = wait_for(
        "an expired request",
        lambda: [a for a in approvals(cli, folder, "--all") if a["status"] == "expired"] or None,
        timeout=60,
    )
    assert expired[0]["subject"]["actions"][0]["key"] == "McpServer/brief-one"
    loop.wait_settled(after=loop.reconciles())
    assert _running(loop, "brief-one") == brief
    assert loop.loop_status()["held"]["status"] == "expired"
    listed = cli("approvals", "list", str(folder), "--all")
    assert f"{expired[0]['id']}  expired" in listed.stdout

    outcomes = [(r["user"], r["outcome"]) for r in _rows(loop, "SELECT * FROM audit ORDER BY id")]
    approval_rows = [o for o in outcomes if o[1].startswith("approval-")]
    assert [o[1] for o in approval_rows] == [
        "approval-requested", "approval-approved", "approval-applied",
        "approval-requested", "approval-rejected",
        "approval-requested", "approval-expired",
    ]  # fmt: skip
    assert approval_rows[1][0].startswith("cli:") and approval_rows[4][0].startswith("cli:")
    events = [(r["type"], json.loads(r["data_json"]).get("status")) for r in _rows(loop, "SELECT * FROM events")]
    resolved = [status for kind, status in events if kind == "approval_resolved"]
    assert resolved == ["approved", "applied", "rejected", "expired"]
