"""The operator end to end on the real API server, with server pods running (tests/k8s/real/kubelet.py).

The same path as in a cluster: the operator writes the Deployment, Service and Secret of a hosted
McpServer; the process kubelet runs the pod (``clawplane bridge`` around the fixture MCP server),
creates the Pod and writes Pod and Deployment status through the real ``/status`` subresources;
the operator waits for that readiness, discovers tools through the Service and publishes the
Agent's and the Gateway's ConfigMaps. Each test has its own namespace, kubelet and operator.
"""

from __future__ import annotations

import base64
import copy
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.k8s.cluster import CONFIG_HASH, GATEWAY, SERVER_PY, agent, secret, server
from tests.k8s.operator_run import OperatorRun, condition, is_true, ready_at, wait_for
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube
from tests.k8s.real.kubelet import RealKubelet

API = "clawplane.dev/v1alpha1"
CONDITIONS = ("Accepted", "ResolvedRefs", "Programmed", "ToolsDiscovered", "Ready")
pytestmark = pytest.mark.compat


def here(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    """One of tests/k8s/cluster.py's objects, in this test's namespace."""
    moved = copy.deepcopy(obj)
    moved["metadata"]["namespace"] = namespace
    return moved


class Pods:
    """The operator and the kubelet on one namespace of the real control plane."""

    def __init__(self, cluster: RealCluster, admin: Kube, namespace: str, tmp: Path) -> None:
        self.admin, self.namespace = admin, namespace
        self.kubelet = RealKubelet(cluster.admin(), tmp / "pods", (namespace,)).start()
        config = cluster.write_kubeconfig(tmp / "operator.kubeconfig", cluster.admin_token, "admin")
        self.op = OperatorRun(config, tmp / "state", routes=self.kubelet.resolve, namespaces=(namespace,)).start()

    def apply(self, *objs: dict[str, Any]) -> None:
        for obj in objs:
            self.admin.apply(here(obj, self.namespace))

    def get(self, api_version: str, kind: str, name: str) -> dict[str, Any] | None:
        return self.admin.get(api_version, kind, self.namespace, name)

    def ready(self, name: str, generation: int = 1) -> dict[str, Any]:
        """Wait for McpServer ``name`` Ready at ``generation`` (the pod's stderr on a timeout)."""
        try:
            return wait_for(
                f"McpServer {name} Ready at generation {generation}",
                lambda: ready_at(self.get(API, "McpServer", name), generation),
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}\npod stderr:\n{self.kubelet.logs(self.namespace, f'mcp-{name}')}") from None

    def template_hash(self, name: str = "mcp-notes") -> str:
        dep = self.get("apps/v1", "Deployment", name)
        assert dep is not None
        return str(dep["spec"]["template"]["metadata"]["annotations"][CONFIG_HASH])

    def stop(self) -> None:
        try:
            self.op.stop()
        finally:
            self.kubelet.stop()


@pytest.fixture
def pods(real_cluster: RealCluster, admin: Kube, namespace: str, tmp_path: Path) -> Iterator[Pods]:
    """The operator and a kubelet for this test's namespace (pods stopped afterwards)."""
    running = Pods(real_cluster, admin, namespace, tmp_path)
    try:
        yield running
    finally:
        running.stop()


def test_a_hosted_server_gets_ready_and_its_tools_reach_the_agent_and_gateway(
    pods: Pods, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    pods.apply(secret("s3cr3t-value"), server(), agent(["notes"]), GATEWAY)
    obj = pods.ready("notes")
    status = obj["status"]
    assert status["toolCount"] > 0 and "notes__echo" in status["tools"]
    assert status["configHash"] and status["restarts"] == 0
    for kind in CONDITIONS:
        cond = condition(obj, kind)
        assert cond is not None and cond["status"] == "True", cond
        assert cond["observedGeneration"] == 1 and cond["lastTransitionTime"] and cond["reason"]

    dep = pods.get("apps/v1", "Deployment", "mcp-notes")
    assert dep is not None and dep["status"]["availableReplicas"] == 1
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:2] == ["clawplane", "bridge"]
    assert container["command"][-2:] == [sys.executable, str(SERVER_PY)]
    owner = dep["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("McpServer", obj["metadata"]["uid"], True)
    (pod,) = pods.admin.list("v1", "Pod", pods.namespace)
    assert pod["metadata"]["ownerReferences"][0]["uid"] == dep["metadata"]["uid"]
    assert pod["status"]["containerStatuses"][0]["ready"] is True

    bot = wait_for("Agent Ready", lambda: (a := pods.get(API, "Agent", "bot")) and is_true(a, "Ready") and a)
    cm = wait_for("agent ConfigMap", lambda: pods.get("v1", "ConfigMap", "clawplane-agent-bot"))
    assert any(t["name"] == "notes__echo" for t in json.loads(cm["data"]["tools.json"]))
    assert cm["metadata"]["ownerReferences"][0]["uid"] == bot["metadata"]["uid"]
    gw = wait_for("gateway ConfigMap", lambda: pods.get("v1", "ConfigMap", "clawplane-gateway-default"))
    rendered = json.loads(gw["data"]["openclaw.json"])
    assert rendered["mcp"]["servers"]["notes"]["url"] == f"http://mcp-notes.{pods.namespace}.svc:8080/mcp"
    everything = json.dumps(
        [pods.admin.list(v, k, pods.namespace) for v, k in
         (("apps/v1", "Deployment"), ("v1", "ConfigMap"), (API, "McpServer"), (API, "Agent"), ("v1", "Pod"))]
    )  # fmt: skip
    pods.op.stop()
    assert f"namespace {pods.namespace}: pass ok" in caplog.text
    for text in (everything, caplog.text):
        assert "s3cr3t-value" not in text and base64.b64encode(b"s3cr3t-value").decode() not in text


def test_the_pod_rolls_on_a_spec_or_referenced_secret_change(pods: Pods) -> None:
    pods.apply(secret("one"), server())
    pods.ready("notes")
    first = pods.template_hash()
    first_pod = {p["metadata"]["name"] for p in pods.admin.list("v1", "Pod", pods.namespace)}
    pods.apply(server(args=["--name", "verbose"]))
    pods.ready("notes", generation=2)
    second = pods.template_hash()
    assert second != first
    wait_for(
        "the old pod replaced",
        lambda: {p["metadata"]["name"] for p in pods.admin.list("v1", "Pod", pods.namespace)} - first_pod,
    )
    pods.apply(secret("two"))
    wait_for("the pod template to roll after the Secret changed", lambda: pods.template_hash() != second)
    pods.ready("notes", generation=2)


def test_a_deleted_child_is_recreated_and_ready_again(pods: Pods) -> None:
    pods.apply(secret("x"), server())
    pods.ready("notes")
    dep = pods.get("apps/v1", "Deployment", "mcp-notes")
    assert dep is not None
    pods.admin.delete("apps/v1", "Deployment", pods.namespace, "mcp-notes")  # drift: someone removed it
    wait_for(
        "the Deployment to come back",
        lambda: (d := pods.get("apps/v1", "Deployment", "mcp-notes")) and d["metadata"]["uid"] != dep["metadata"]["uid"],
    )
    wait_for(
        "the new Deployment available",
        lambda: ((pods.get("apps/v1", "Deployment", "mcp-notes") or {}).get("status") or {}).get("availableReplicas") == 1,
    )
    pods.ready("notes")
