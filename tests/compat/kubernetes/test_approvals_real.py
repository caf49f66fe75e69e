"""Plan approvals on the real API server, answered with real kubectl as docs/kubernetes.md says.

The Gateway holds McpServer deletes. ``kubectl delete --wait=false`` leaves the server terminating
(the operator's finalizer kept) and its pod running, with ``Approved=False/AwaitingApproval``
naming the request; ``kubectl annotate mcpserver NAME clawplane.dev/approve=<id>`` lets the delete
go through, and the real garbage collector removes the children. A reject keeps the server; an
annotation naming a request that does not hold the resource is ignored; one nobody answers in time
turns ``Expired``. The answers are in the namespace's audit, under kubectl's field manager.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.compat.kubernetes.test_operator_pods_real import API, Pods, pods
from tests.k8s.cluster import GATEWAY, agent, secret, server
from tests.k8s.operator_run import wait_for
from tests.oracles.runners import OracleRunner

from clawplane.state import StateDB, store

__all__ = ["pods"]  # the fixture
pytestmark = pytest.mark.compat
HOLD_DELETES = {
    **GATEWAY,
    "spec": {"approvals": {"rules": [
        {"name": "brief-deletes", "kinds": ["McpServer"], "actions": ["delete"], "names": ["brief-*"], "ttlMs": 2000},
        {"name": "server-deletes", "kinds": ["McpServer"], "actions": ["delete"]},
    ]}},
}  # fmt: skip


def _condition(pods: Pods, name: str, reason: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        conditions = ((pods.get(API, "McpServer", name) or {}).get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "Approved" and c["reason"] == reason), None)

    return wait_for(f"McpServer {name} Approved={reason}", found, timeout=60)


def _approval_id(message: str) -> str:
    return message.split("waits for approval ", 1)[1].split()[0]


def test_held_deletes_are_answered_with_kubectl_annotate(pods: Pods, kubectl_real: OracleRunner) -> None:
    names = ("notes", "other", "third", "brief-one")
    pods.apply(secret("x"), *(server(n) for n in names), agent(None), HOLD_DELETES)
    for name in names:
        pods.ready(name)

    def kubectl(*args: str) -> str:
        done = kubectl_real.run(*args, "-n", pods.namespace)
        assert done.returncode == 0, done.stderr
        return str(done.stdout)

    kubectl("delete", "mcpserver", "other", "--wait=false")
    held = _condition(pods, "other", "AwaitingApproval")
    first = _approval_id(held["message"])
    assert f"annotate this resource with clawplane.dev/approve={first}" in held["message"]
    obj = pods.get(API, "McpServer", "other")
    assert obj is not None and obj["metadata"].get("deletionTimestamp") and obj["status"]["phase"] == "Ready"
    assert pods.get("apps/v1", "Deployment", "mcp-other") is not None

    kubectl("annotate", "mcpserver", "notes", f"clawplane.dev/approve={first}")  # not held by notes: ignored
    kubectl("annotate", "mcpserver", "other", f"clawplane.dev/approve={first}", "clawplane.dev/approval-reason=retired")
    wait_for("McpServer other gone", lambda: pods.get(API, "McpServer", "other") is None, timeout=60)
    wait_for("its Deployment collected", lambda: pods.get("apps/v1", "Deployment", "mcp-other") is None, timeout=60)
    assert pods.get("apps/v1", "Deployment", "mcp-notes") is not None

    kubectl("delete", "mcpserver", "third", "--wait=false")
    second = _approval_id(_condition(pods, "third", "AwaitingApproval")["message"])
    assert second != first
    kubectl("annotate", "mcpserver", "third", f"clawplane.dev/reject={second}", "clawplane.dev/approval-reason=in use")
    rejected = _condition(pods, "third", "Rejected")
    assert f"approval {second} was rejected" in rejected["message"] and "in use" in rejected["message"]
    assert pods.get("apps/v1", "Deployment", "mcp-third") is not None
    notes = pods.get(API, "McpServer", "notes")
    assert notes is not None and not any(c["type"] == "Approved" for c in notes["status"]["conditions"])

    kubectl("delete", "mcpserver", "brief-one", "--wait=false")  # held for 2 s only
    assert "was expired" in _condition(pods, "brief-one", "Expired")["message"]
    assert pods.get("apps/v1", "Deployment", "mcp-brief-one") is not None

    db = StateDB.open(pods.op.state_dir / "namespaces" / pods.namespace / "state")
    try:
        audit: list[Any] = store.audit_entries(db, limit=50)
    finally:
        db.close()
    outcomes = {(e.outcome, e.detail.split(":", 1)[0]) for e in audit}
    assert ("approval-approved", first) in outcomes and ("approval-rejected", second) in outcomes
    answered = [e for e in audit if e.outcome in ("approval-approved", "approval-rejected")]
    assert all(e.user.startswith("k8s:kubectl") and "on McpServer/" in e.user for e in answered), [e.user for e in answered]
