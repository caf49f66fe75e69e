"""Two ``clawplane k8s run --namespace-selector`` processes split the namespaces of the real API server.

Both run as the chart's ServiceAccount (the ``start`` fixture of the leader-election test); the
audit log tells them apart by the User-Agent each sends (``clawplane-operator/<version>
(replica=…; shard=<selector>)``), so it shows that neither ever wrote in the other's namespaces.
What each shard reconciles also shows in the finalizer it puts on the resources (one name per
selector) and in the Lease each leads. The label key is this test's own, so the namespaces of
other tests on the same control plane match neither selector.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.compat.kubernetes.test_leader_election_real import STARTUP_S, _args, _readyz, start
from tests.compat.kubernetes.test_operator_rbac import SA_USER
from tests.k8s.operator_run import wait_for
from tests.k8s.real import audit
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube

from clawplane.k8s.operator import finalizer

__all__ = ["start"]  # the fixture
API = "clawplane.dev/v1alpha1"
pytestmark = pytest.mark.compat


def _label(admin: Kube, namespace: str, key: str, value: str | None) -> None:
    labels = {key: value} if value else {}
    admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}},
                manager="shard-test")  # fmt: skip


def _server(namespace: str, *args: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "McpServer", "metadata": {"name": "files", "namespace": namespace},
            "spec": {"transport": "stdio", "command": "npx", "args": ["-y", "files-server", *args]}}  # fmt: skip


def _programmed(admin: Kube, namespace: str) -> bool:
    obj = admin.get(API, "McpServer", namespace, "files") or {}
    return any(c["type"] == "Programmed" and c["status"] == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])  # fmt: skip


def _finalizers(admin: Kube, namespace: str) -> list[str]:
    return list(((admin.get(API, "McpServer", namespace, "files") or {}).get("metadata") or {}).get("finalizers") or [])


def namespaces_written(cluster: RealCluster, admin: Kube, offset: int, selector: str) -> set[str]:
    """The namespaces the shard with ``selector`` wrote in since ``offset`` (from the audit log)."""
    window = audit.AuditWindow(cluster.audit_log, SA_USER)
    window.offset = offset
    window.settle(admin)
    return {
        str(e["objectRef"]["namespace"])
        for e in window.mine()
        if e["verb"] in audit.WRITES and f"shard={selector})" in e.get("userAgent", "")
        and (e.get("objectRef") or {}).get("namespace")
        and e["objectRef"].get("resource") != "leases"
    }  # fmt: skip


def test_two_shards_split_the_namespaces_and_a_relabelled_namespace_moves(
    real_cluster: RealCluster, admin: Kube, namespace: str, start: Any, tmp_path: Path
) -> None:
    key = f"clawplane.dev/shard-{namespace}"
    team = {"a": namespace, "b": real_cluster.new_namespace(), "none": real_cluster.new_namespace()}
    for shard, ns in team.items():
        _label(admin, ns, key, None if shard == "none" else shard)
        admin.apply(_server(ns))
    start_offset = real_cluster.audit_log.stat().st_size
    a, a_port = start("shard-a", "--namespace-selector", f"{key}=a", "--leader-election-id", f"shard-a-{namespace}")
    b, b_port = start("shard-b", "--namespace-selector", f"{key}=b", "--leader-election-id", f"shard-b-{namespace}")
    wait_for("both shards programmed theirs", lambda: _programmed(admin, team["a"]) and _programmed(admin, team["b"]),
             timeout=STARTUP_S)  # fmt: skip
    wait_for("both lead their own Lease", lambda: _readyz(a_port) == _readyz(b_port) == "ready (leader)")
    shard_a, shard_b = finalizer(f"{key}=a"), finalizer(f"{key}=b")
    assert shard_a != shard_b
    assert _finalizers(admin, team["a"]) == [shard_a] and _finalizers(admin, team["b"]) == [shard_b]
    # The unlabelled namespace is nobody's: no child, no finalizer, no status.
    assert admin.get("apps/v1", "Deployment", team["none"], "mcp-files") is None
    assert _finalizers(admin, team["none"]) == [] and not _programmed(admin, team["none"])
    assert namespaces_written(real_cluster, admin, start_offset, f"{key}=a") == {team["a"]}
    assert namespaces_written(real_cluster, admin, start_offset, f"{key}=b") == {team["b"]}
    # The replica and shard ride in a User-Agent comment: the field manager is still the product's.
    managers = {f["manager"] for f in admin.get("apps/v1", "Deployment", team["a"], "mcp-files")["metadata"]["managedFields"]}
    assert managers == {"clawplane-operator"}, managers
    moved = real_cluster.audit_log.stat().st_size

    # team b moves to shard a: a change made after the move is a's to apply, and only a's finalizer stays.
    _label(admin, team["b"], key, "a")
    admin.apply(_server(team["b"], "--after-the-move"))
    wait_for("shard a applied the change in the moved namespace", lambda: "--after-the-move" in _args(admin, team["b"]),
             timeout=STARTUP_S)  # fmt: skip
    wait_for("only shard a's finalizer", lambda: _finalizers(admin, team["b"]) == [shard_a])
    assert team["b"] in namespaces_written(real_cluster, admin, moved, f"{key}=a")
    # Moving it back hands it back.
    _label(admin, team["b"], key, "b")
    admin.apply(_server(team["b"], "--back-again"))
    wait_for("shard b applied the change", lambda: "--back-again" in _args(admin, team["b"]), timeout=STARTUP_S)
    wait_for("only shard b's finalizer", lambda: _finalizers(admin, team["b"]) == [shard_b])
    for name, proc in (("shard-a", a), ("shard-b", b)):
        assert proc.poll() is None
        assert "Traceback" not in (tmp_path / name / "operator.log").read_text(errors="replace")


def test_a_malformed_selector_is_refused_with_the_api_servers_reason(start: Any, tmp_path: Path) -> None:
    bad, _ = start("shard-bad", "--namespace-selector", "shard in (a", "--no-leader-elect")
    assert bad.wait(timeout=STARTUP_S) == 2
    output = (tmp_path / "shard-bad" / "operator.log").read_text(errors="replace")
    assert "--namespace-selector 'shard in (a'" in output and "Traceback" not in output, output[-2000:]
    assert "unable to parse requirement" in output or "invalid" in output.lower(), output[-2000:]
