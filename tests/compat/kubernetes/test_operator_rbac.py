"""The operator under the chart's identity: every request it makes is authorized by the chart alone.

The chart is rendered (helm, in-process) and its ServiceAccount, Roles and bindings are created in
the real API server; the operator runs with a token of that ServiceAccount from the TokenRequest
API, so RBAC decides each request as in a cluster. The API server's audit log says which
(resource, verb) pairs it used and whether any was refused. Pods cannot run here (no nodes), so
hosted servers never get Ready; everything the operator writes for them still happens.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.k8s import helmutil
from tests.k8s.operator_run import OperatorRun, wait_for
from tests.k8s.real import audit
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube

ROOT = Path(__file__).resolve().parents[3]
SERVER_PY = ROOT / "tests" / "fixtures" / "servers" / "normal_server.py"
API = "clawplane.dev/v1alpha1"
SYSTEM = helmutil.RELEASE_NAMESPACE
SA_USER = f"system:serviceaccount:{SYSTEM}:clawplane"
JSON = dict[str, Any]
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
NEVER_USED = {
    ("coordination.k8s.io", "leases", "create"),
    ("coordination.k8s.io", "leases", "get"),
    ("coordination.k8s.io", "leases", "update"),
}
"""Granted and not used in these runs: leader election (a standalone operator holds no Lease).
test_leader_election_real.py runs two operators on exactly these grants."""
pytestmark = pytest.mark.compat


def _rbac(values: JSON) -> list[JSON]:
    return [doc for doc in helmutil.render(values) if doc["kind"] in RBAC_KINDS]


@contextmanager
def chart_rbac(admin: Kube, docs: list[JSON]) -> Iterator[list[JSON]]:
    """The chart's RBAC objects created in the cluster (and deleted afterwards)."""
    if admin.get("v1", "Namespace", None, SYSTEM) is None:
        admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SYSTEM}})
    for doc in docs:
        admin.apply(doc, manager="helm")
    try:
        yield docs
    finally:
        for doc in reversed(docs):
            meta = doc["metadata"]
            admin.delete(doc["apiVersion"], doc["kind"], meta.get("namespace"), meta["name"])


def demo_objects(namespace: str) -> list[JSON]:
    """A Secret, a hosted and a remote McpServer, an Agent and the Gateway."""
    token = base64.b64encode(b"demo-token").decode()
    meta = {"namespace": namespace}
    return [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tokens", **meta}, "data": {"token": token}},
        {"apiVersion": API, "kind": "McpServer", "metadata": {"name": "notes", **meta},
         "spec": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER_PY)],
                  "env": {"API_TOKEN": {"valueFrom": {"secretKeyRef": {"name": "tokens", "key": "token"}}}}}},
        {"apiVersion": API, "kind": "McpServer", "metadata": {"name": "far", **meta},
         "spec": {"transport": "streamable-http", "url": "http://127.0.0.1:1/mcp"}},
        {"apiVersion": API, "kind": "Agent", "metadata": {"name": "bot", **meta},
         "spec": {"description": "helps", "mcpServers": ["notes", "far"]}},
        {"apiVersion": API, "kind": "Gateway", "metadata": {"name": "default", **meta}, "spec": {}},
    ]  # fmt: skip


def granted(docs: list[JSON]) -> set[tuple[str, str, str]]:
    """(group, resource, verb) of every rule the chart grants."""
    return {
        (group, resource, verb)
        for doc in docs
        if doc["kind"] in ("Role", "ClusterRole")
        for rule in doc.get("rules", [])
        for group in rule.get("apiGroups", [])
        for resource in rule.get("resources", [])
        for verb in rule.get("verbs", [])
    }


def run_as_chart(cluster: RealCluster, tmp: Path, namespace: str, namespaces: tuple[str, ...]) -> OperatorRun:
    """The operator, authenticated as the chart's ServiceAccount (nothing else authorizes it)."""
    token = cluster.service_account_token(SYSTEM, "clawplane")
    config = cluster.write_kubeconfig(tmp / "operator.kubeconfig", token, "clawplane", namespace)
    return OperatorRun(config, tmp / "state", namespaces=namespaces)


def converge(cluster: RealCluster, admin: Kube, namespace: str) -> None:
    """Apply the demo objects and wait for what the operator writes without pods."""
    for obj in demo_objects(namespace):
        admin.apply(obj)

    def programmed() -> bool:
        far = admin.get(API, "McpServer", namespace, "far") or {}
        conditions = {c["type"]: c for c in (far.get("status") or {}).get("conditions") or []}
        return conditions.get("Programmed", {}).get("status") == "True"

    wait_for("McpServer far Programmed", programmed)
    wait_for(
        "the Deployment of the hosted server",
        lambda: admin.get("apps/v1", "Deployment", namespace, "mcp-notes"),
    )
    wait_for("the Service of the hosted server", lambda: admin.get("v1", "Service", namespace, "mcp-notes"))
    wait_for(
        "the gateway's openclaw.json",
        lambda: admin.get("v1", "ConfigMap", namespace, "clawplane-gateway-default"),
    )
    agent = wait_for(
        "Agent bot to report on its servers",
        lambda: (
            (a := admin.get(API, "Agent", namespace, "bot"))
            and (a.get("status") or {}).get("conditions")
            and a
        ),
    )
    assert agent["status"]["conditions"], agent


@pytest.mark.parametrize("scope", ["cluster-wide", "namespaced"])
def test_the_operator_under_the_charts_service_account_converges_with_no_refusal(
    real_cluster: RealCluster,
    admin: Kube,
    namespace: str,
    tmp_path: Path,
    scope: str,
    record_property: Callable[[str, object], None],
) -> None:
    values: JSON = {"watchNamespaces": [namespace]} if scope == "namespaced" else {}
    docs = _rbac(values)
    offset = real_cluster.audit_log.stat().st_size
    scope_namespaces = (namespace,) if values else ()
    with chart_rbac(admin, docs), run_as_chart(real_cluster, tmp_path, namespace, scope_namespaces):
        converge(real_cluster, admin, namespace)
    mine = [e for e in audit.events(real_cluster.audit_log, offset) if e["user"]["username"] == SA_USER]
    assert mine, "the audit log has no request of the operator"
    refused = sorted({audit.key(e) for e in mine if e.get("responseStatus", {}).get("code") == 403})
    assert not refused, f"the chart does not grant what the operator asked for: {refused}"
    used = {audit.key(e) for e in mine if e.get("objectRef")}
    allowed = granted(docs)
    assert used <= allowed, f"used but not granted: {sorted(used - allowed)}"
    unused = allowed - used - NEVER_USED
    # What the chart grants and this run never needed (deletes, updates, pods: no pod runs here),
    # in the JUnit report and the closing notes; leader election is NEVER_USED by design.
    record_property("granted_unused", sorted(unused))


def test_a_verb_missing_from_the_chart_is_a_refusal_this_suite_reports(
    real_cluster: RealCluster, admin: Kube, namespace: str, tmp_path: Path
) -> None:
    docs = _rbac({"watchNamespaces": [namespace]})
    for doc in docs:
        for rule in doc.get("rules", []):
            if rule.get("resources") == ["deployments"]:
                rule["verbs"] = [v for v in rule["verbs"] if v != "create"]
    offset = real_cluster.audit_log.stat().st_size
    with chart_rbac(admin, docs), run_as_chart(real_cluster, tmp_path, namespace, (namespace,)):
        for obj in demo_objects(namespace)[:2]:
            admin.apply(obj)
        wait_for(
            "the operator's refused Deployment create in the audit log",
            lambda: [
                e for e in audit.events(real_cluster.audit_log, offset)
                if e["user"]["username"] == SA_USER and audit.key(e) == ("apps", "deployments", "create")
                and e.get("responseStatus", {}).get("code") == 403
            ],
        )  # fmt: skip
        notes = wait_for(
            "McpServer notes to say why it is not running",
            lambda: (
                (s := admin.get(API, "McpServer", namespace, "notes"))
                and "forbidden" in json.dumps((s.get("status") or {}).get("conditions") or []).lower()
                and s
            ),
        )
    assert notes["metadata"]["name"] == "notes"
