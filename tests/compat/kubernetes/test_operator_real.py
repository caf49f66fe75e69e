"""The operator end to end on the real API server: rollouts, deletion, restarts, invalid specs.

kopf runs in-process (KopfRunner) with clawplane's registry, authenticated as the chart's
ServiceAccount (tests/k8s/real/operator_cluster.py), so RBAC authorizes each request and the
audit log counts the operator's own writes. The process kubelet (tests/k8s/real/kubelet.py) runs
each server Deployment's pod for real (``clawplane bridge`` around a fixture MCP server) and
writes Pod and Deployment status; the operator waits for that readiness and then discovers
tools through the Service. Conflicts injected on purpose stay on the emulator
(tests/integration/k8s/test_operator_conflicts.py): a real server has no switch for them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.k8s.cluster import GATEWAY, NS, SERVER_PY, agent, apply_all, b64, secret, server
from tests.k8s.operator_run import condition, is_true, until
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube
from tests.k8s.real.operator_cluster import RealOperatorCluster as Cluster
from tests.k8s.real.operator_cluster import real_operator_cluster

pytestmark = pytest.mark.compat


def test_pod_template_rolls_on_spec_or_secret_change_only(cluster: Cluster) -> None:
    apply_all(cluster, secret("one"), server(), agent(["notes"]), GATEWAY)
    cluster.ready("notes")
    first = cluster.template_hash()
    deployment_writes = len(cluster.emu.writes("deployments", NS))

    cluster.patch_spec("agents", "bot", {"description": "changed"})  # not the server's business
    until(
        cluster.emu,
        "Agent generation 2",
        lambda: is_true(cluster.get("agents", "bot"), "Ready", generation=2),
    )
    labelled = cluster.get("mcpservers", "notes")
    assert labelled is not None
    labelled["metadata"].setdefault("labels", {})["team"] = "a"
    cluster.emu.apply_object(labelled)
    passes = cluster.op.passes()
    unrelated = secret("one")
    unrelated["data"]["unused"] = b64("not referenced by anything")
    cluster.emu.apply_object(unrelated)  # a Secret event, but no referenced value changed
    cluster.op.wait_pass(passes)
    assert cluster.template_hash() == first
    assert len(cluster.emu.writes("deployments", NS)) == deployment_writes

    cluster.patch_spec("mcpservers", "notes", {"args": [str(SERVER_PY), "--name", "verbose"]})
    cluster.ready("notes", generation=2)
    second = cluster.template_hash()
    assert second != first

    passes = cluster.op.passes()
    cluster.emu.apply_object(secret("two"))
    until(
        cluster.emu,
        "pod template to roll after the Secret changed",
        lambda: cluster.template_hash() != second,
    )
    cluster.op.wait_pass(passes)
    cluster.ready("notes", generation=2)


def test_restart_annotation_bounces_the_pods(cluster: Cluster) -> None:
    apply_all(cluster, secret("x"), server())
    cluster.ready("notes")
    before = cluster.template_hash()
    obj = cluster.get("mcpservers", "notes")
    assert obj is not None
    obj["metadata"].setdefault("annotations", {})["clawplane.dev/restartedAt"] = "2026-12-02T10:00:00Z"
    cluster.emu.apply_object(obj)
    until(cluster.emu, "restart to change the pod template", lambda: cluster.template_hash() != before)


def test_delete_removes_what_the_resource_owned(cluster: Cluster) -> None:
    apply_all(cluster, secret("x"), server(), server("other"), agent(["notes", "other"]), GATEWAY)
    cluster.ready("notes")
    cluster.ready("other")
    until(cluster.emu, "agent ConfigMap", lambda: cluster.get("configmaps", "clawplane-agent-bot"))

    cluster.emu.delete_object("mcpservers", NS, "other")
    until(cluster.emu, "McpServer other to be gone", lambda: cluster.get("mcpservers", "other") is None)
    assert cluster.get("deployments", "mcp-other") is None
    assert cluster.get("services", "mcp-other") is None
    assert cluster.get("deployments", "mcp-notes") is not None
    agent_status = until(
        cluster.emu,
        "Agent to lose the reference",
        lambda: condition(cluster.get("agents", "bot"), "ResolvedRefs"),
    )
    assert agent_status["status"] == "False" and agent_status["reason"] == "RefNotFound"

    cluster.emu.delete_object("agents", NS, "bot")
    until(cluster.emu, "Agent to be gone", lambda: cluster.get("agents", "bot") is None)
    assert cluster.get("configmaps", "clawplane-agent-bot") is None
    cluster.emu.delete_object("gateways", NS, "default")
    until(
        cluster.emu,
        "Gateway ConfigMap to be gone",
        lambda: cluster.get("configmaps", "clawplane-gateway-default") is None,
    )


def test_operator_restart_resumes_without_duplicate_work(cluster: Cluster) -> None:
    apply_all(cluster, secret("x"), server(), agent(["notes"]), GATEWAY)
    cluster.ready("notes")
    until(cluster.emu, "agent ConfigMap", lambda: cluster.get("configmaps", "clawplane-agent-bot"))
    cluster.op.stop()
    writes = cluster.child_writes()

    for state in ("state", "fresh-state"):  # same state dir, then a lost one (emptyDir after a reschedule)
        cluster.op = cluster.start_operator(state)
        cluster.op.wait_pass(0)
        assert is_true(cluster.get("mcpservers", "notes"), "Ready", generation=1)
        assert cluster.child_writes() == writes, cluster.emu.writes("deployments", NS)
        cluster.op.stop()
    cluster.op = cluster.start_operator()


def test_invalid_spec_keeps_the_last_good_one_running(cluster: Cluster) -> None:
    apply_all(cluster, secret("x"), server())
    cluster.ready("notes")
    template = cluster.template_hash()
    # Valid for the CRD's schema and CEL rules (the API server stores it; no webhook runs here),
    # refused by clawplane's own validation. It also drops the Secret reference of the running
    # spec: the pods must not roll for a Secret that only the refused spec stopped naming.
    cluster.patch_spec("mcpservers", "notes", {"env": {"LD_PRELOAD": "/tmp/x.so"}})
    refused = until(
        cluster.emu,
        "Accepted=False for generation 2",
        lambda: (
            (c := condition(cluster.get("mcpservers", "notes"), "Accepted"))
            and c["status"] == "False"
            and c["observedGeneration"] == 2
            and c
        ),
    )
    assert refused["reason"] == "Invalid" and "LD_PRELOAD" in refused["message"], refused
    obj = cluster.get("mcpservers", "notes")
    assert obj is not None and obj["status"]["observedGeneration"] == 1
    assert is_true(obj, "Ready") and cluster.template_hash() == template, obj["status"]


def test_missing_secret_is_reported(cluster: Cluster) -> None:
    apply_all(cluster, server())
    cond = until(
        cluster.emu,
        "ResolvedRefs=False",
        lambda: (c := condition(cluster.get("mcpservers", "notes"), "ResolvedRefs")) and c,
    )
    assert cond["status"] == "False" and cond["reason"] == "SecretNotFound"
    assert "tokens" in cond["message"]


def test_namespaced_operator_leaves_other_namespaces_alone(
    real_cluster: RealCluster, admin: Kube, tmp_path: Path
) -> None:
    with real_operator_cluster(
        real_cluster, admin, tmp_path, logical=(NS, "elsewhere"), start=False
    ) as cluster:
        cluster.op = cluster.start_operator(namespaces=(cluster.namespace,))
        outside = server()
        outside["metadata"]["namespace"] = "elsewhere"
        apply_all(cluster, outside, secret("x"), server())
        cluster.ready("notes")
        assert (cluster.emu.get("mcpservers", "elsewhere", "notes") or {}).get("status") is None
        assert cluster.emu.list("deployments", "elsewhere") == []
        assert not [w for w in cluster.emu.watches() if w[1] == cluster.namespaces["elsewhere"]]
