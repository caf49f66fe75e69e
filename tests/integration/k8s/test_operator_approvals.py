"""Plan approvals in Kubernetes, against the API emulator: held deletes answered by annotation.

The Gateway holds McpServer deletes. Deleting a server leaves it terminating (finalizer kept)
and running, with ``Approved=False/AwaitingApproval`` naming the request; annotating it with
``clawplane.dev/approve: <id>`` lets the delete go through. A second one, annotated with
``clawplane.dev/reject: <id>``, stays with ``Approved=False/Rejected``; an annotation naming a
request that does not hold the resource is ignored; one nobody answers in time turns
``Expired``. Answers are in the namespace's audit.
"""

from __future__ import annotations

from typing import Any

from tests.k8s.cluster import GATEWAY, NS, Cluster, agent, apply_all, secret, server
from tests.k8s.operator_run import until

from clawplane.state import StateDB, store

HOLD_DELETES = {
    **GATEWAY,
    "spec": {"approvals": {"rules": [
        {"name": "brief-deletes", "kinds": ["McpServer"], "actions": ["delete"], "names": ["brief-*"], "ttlMs": 2000},
        {"name": "server-deletes", "kinds": ["McpServer"], "actions": ["delete"]},
    ]}},
}


def _annotate(cluster: Cluster, name: str, annotations: dict[str, str]) -> None:
    obj = cluster.get("mcpservers", name)
    assert obj is not None
    obj["metadata"].setdefault("annotations", {}).update(annotations)
    cluster.emu.apply_object(obj)


def _approval_id(message: str) -> str:
    return message.split("waits for approval ", 1)[1].split()[0]


def test_held_deletes_are_answered_by_annotation(cluster: Cluster) -> None:
    servers = [server(name) for name in ("notes", "other", "third", "brief-one")]
    apply_all(cluster, secret("x"), *servers, agent(None), HOLD_DELETES)
    for name in ("notes", "other", "third", "brief-one"):
        cluster.ready(name)

    cluster.emu.delete_object("mcpservers", NS, "other")
    held = cluster.condition("mcpservers", "other", "Approved", status="False", reason="AwaitingApproval")
    first = _approval_id(held["message"])
    assert "annotate this resource with clawplane.dev/approve=" + first in held["message"]
    obj = cluster.get("mcpservers", "other")
    assert obj is not None and obj["metadata"].get("deletionTimestamp")  # terminating, kept
    assert obj["status"]["phase"] == "Ready"  # and still running
    assert cluster.get("deployments", "mcp-other") is not None

    _annotate(cluster, "notes", {"clawplane.dev/approve": first})  # not held by it: ignored
    _annotate(cluster, "other", {"clawplane.dev/approve": first, "clawplane.dev/approval-reason": "retired"})
    until(cluster.emu, "McpServer other to be gone", lambda: cluster.get("mcpservers", "other") is None,
          timeout=60)  # fmt: skip
    assert cluster.get("deployments", "mcp-other") is None
    assert cluster.get("deployments", "mcp-notes") is not None

    cluster.emu.delete_object("mcpservers", NS, "third")
    held = cluster.condition("mcpservers", "third", "Approved", status="False", reason="AwaitingApproval")
    second = _approval_id(held["message"])
    assert second != first
    _annotate(cluster, "third", {"clawplane.dev/reject": second, "clawplane.dev/approval-reason": "in use"})
    rejected = cluster.condition("mcpservers", "third", "Approved", status="False", reason="Rejected")
    assert f"approval {second} was rejected" in rejected["message"] and "in use" in rejected["message"]
    assert cluster.get("deployments", "mcp-third") is not None
    notes = cluster.get("mcpservers", "notes")
    assert notes is not None and not any(c["type"] == "Approved" for c in notes["status"]["conditions"])

    cluster.emu.delete_object("mcpservers", NS, "brief-one")  # held for 2 s only
    expired = cluster.condition("mcpservers", "brief-one", "Approved", status="False", reason="Expired")
    assert "was expired" in expired["message"]
    assert cluster.get("deployments", "mcp-brief-one") is not None

    db = StateDB.open(cluster.op.state_dir / "namespaces" / NS / "state")
    try:
        audit: list[Any] = store.audit_entries(db, limit=50)
    finally:
        db.close()
    outcomes = {(e.outcome, e.detail.split(":", 1)[0]) for e in audit}
    assert ("approval-approved", first) in outcomes and ("approval-rejected", second) in outcomes
    answered = [e for e in audit if e.outcome in ("approval-approved", "approval-rejected")]
    assert all(e.user.startswith("k8s:") and "on McpServer/" in e.user for e in answered)
