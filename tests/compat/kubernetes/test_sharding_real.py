"""Two ``clawplane k8s run --namespace-selector`` processes split the namespaces of the real API server.

Both run as the chart's ServiceAccount (the ``start`` fixture of the leader-election test), so the
audit log cannot tell them apart; what each shard reconciles shows in the finalizer it puts on the
resources (one name per selector) and in the Lease each leads. The label key is this test's own,
so the namespaces of other tests on the same control plane match neither selector.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.compat.kubernetes.test_leader_election_real import STARTUP_S, _args, _readyz, start
from tests.k8s.operator_run import wait_for
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


def test_two_shards_split_the_namespaces_and_a_relabelled_namespace_moves(
    real_cluster: RealCluster, admin: Kube, namespace: str, start: Any, tmp_path: Path
) -> None:
    key = f"clawplane.dev/shard-{namespace}"
    team = {"a": namespace, "b": real_cluster.new_namespace(), "none": real_cluster.new_namespace()}
    for shard, ns in team.items():
        _label(admin, ns, key, None if shard == "none" else shard)
        admin.apply(_server(ns))
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

    # team b moves to shard a: a change made after the move is a's to apply, and only a's finalizer stays.
    _label(admin, team["b"], key, "a")
    admin.apply(_server(team["b"], "--after-the-move"))
    wait_for("shard a applied the change in the moved namespace", lambda: "--after-the-move" in _args(admin, team["b"]),
             timeout=STARTUP_S)  # fmt: skip
    wait_for("only shard a's finalizer", lambda: _finalizers(admin, team["b"]) == [shard_a])
    # Moving it back hands it back.
    _label(admin, team["b"], key, "b")
    admin.apply(_server(team["b"], "--back-again"))
    wait_for("shard b applied the change", lambda: "--back-again" in _args(admin, team["b"]), timeout=STARTUP_S)
    wait_for("only shard b's finalizer", lambda: _finalizers(admin, team["b"]) == [shard_b])
    for name, proc in (("shard-a", a), ("shard-b", b)):
        assert proc.poll() is None
        assert "Traceback" not in (tmp_path / name / "operator.log").read_text(errors="replace")
