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
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tests.k8s import helmutil
from tests.k8s.operator_run import OperatorRun, ready_at, wait_for
from tests.k8s.real import audit
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import ApiError, Kube
from tests.k8s.real.kubelet import RealKubelet

from clawplane.k8s.adapter.reconciler import CRD_KINDS
from clawplane.k8s.admission.server import WebhookService
from clawplane.k8s.admission.settings import Target, WebhookOptions
from clawplane.k8s.api.kubeconfig import load_connection

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


REVIEWED_UNUSED: dict[tuple[str, str, str], str] = {
    **{key: "leader election: test_leader_election_real.py runs two operators on these grants" for key in NEVER_USED},
    ("", "events", "create"): "kopf posts core v1 Events for handler warnings and errors (posting.level WARNING); "
    "no handler fails in this scenario",
    ("", "namespaces", "list"): "sharding: --namespace-selector lists and watches Namespaces (test_sharding_real.py)",
    ("", "namespaces", "watch"): "sharding: --namespace-selector lists and watches Namespaces (test_sharding_real.py)",
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "update"): "the registration is rewritten "
    "when its CA bundle or rules change: the certificate renewal of test_admission_real.py",
}
"""Granted, not used by the full scenario, and kept on purpose: the reason each is there."""


def full_scenario(pods: RealKubelet, admin: Kube, namespace: str) -> None:
    """Everything the operator does with pods running: create, roll, repair, restart, delete."""
    for obj in demo_objects(namespace):
        admin.apply(obj)
    extra = [
        {"apiVersion": API, "kind": "Skill", "metadata": {"name": "style", "namespace": namespace},
         "spec": {"description": "House style.", "body": "# Style\n"}},
        {"apiVersion": API, "kind": "Channel", "metadata": {"name": "tg", "namespace": namespace},
         "spec": {"type": "telegram", "agent": "bot", "dmPolicy": "allowlist", "allowFrom": ["1"],
                  "credentials": {"botToken": {"valueFrom": {"secretKeyRef": {"name": "tokens", "key": "token"}}}}}},
        {"apiVersion": API, "kind": "ModelProvider", "metadata": {"name": "local", "namespace": namespace},
         "spec": {"baseUrl": "http://127.0.0.1:1/v1", "models": [{"id": "m"}]}},
    ]  # fmt: skip
    for obj in extra:
        admin.apply(obj)

    def ready(generation: int) -> Callable[[], bool]:
        return lambda: ready_at(admin.get(API, "McpServer", namespace, "notes"), generation) is not None

    wait_for("McpServer notes Ready (its pod running)", ready(1))
    agent_cm = wait_for("the agent's ConfigMap", lambda: admin.get("v1", "ConfigMap", namespace, "clawplane-agent-bot"))
    # A spec change rolls the Deployment; a deleted ConfigMap and an edited Service are repaired.
    notes = demo_objects(namespace)[1]
    notes["spec"]["args"] = [str(SERVER_PY), "--name", "v2"]
    admin.apply(notes)
    wait_for("McpServer notes Ready at generation 2", ready(2))
    admin.delete("v1", "ConfigMap", namespace, "clawplane-agent-bot")
    wait_for(
        "the agent's ConfigMap recreated",
        lambda: (cm := admin.get("v1", "ConfigMap", namespace, "clawplane-agent-bot"))
        and cm["metadata"]["uid"] != agent_cm["metadata"]["uid"],
    )
    service = admin.get("v1", "Service", namespace, "mcp-notes")
    assert service is not None
    service["spec"]["ports"][0]["port"] = 9999
    admin.request("PUT", admin.path("v1", "Service", namespace, "mcp-notes"), json=service)
    wait_for(
        "the Service repaired",
        lambda: (admin.get("v1", "Service", namespace, "mcp-notes") or {})["spec"]["ports"][0]["port"] != 9999,
    )
    policy = admin.get("networking.k8s.io/v1", "NetworkPolicy", namespace, "mcp-notes")
    assert policy is not None
    policy["spec"]["ingress"] = []
    admin.request("PUT", admin.path("networking.k8s.io/v1", "NetworkPolicy", namespace, "mcp-notes"), json=policy)
    wait_for(
        "the NetworkPolicy repaired",
        lambda: (admin.get("networking.k8s.io/v1", "NetworkPolicy", namespace, "mcp-notes") or {})["spec"].get("ingress"),
    )
    token = admin.get("v1", "Secret", namespace, "mcp-notes-token")
    assert token is not None
    token["data"]["authorization"] = base64.b64encode(b"Bearer tampered").decode()
    admin.request("PUT", admin.path("v1", "Secret", namespace, "mcp-notes-token"), json=token)
    wait_for(
        "the token Secret repaired",
        lambda: (admin.get("v1", "Secret", namespace, "mcp-notes-token") or {}).get("data", {}).get("authorization")
        != token["data"]["authorization"],
    )
    # A rotated token Secret, then the server, the agent and the gateway deleted.
    admin.delete("v1", "Secret", namespace, "mcp-notes-token")
    wait_for("a new token Secret", lambda: admin.get("v1", "Secret", namespace, "mcp-notes-token"))
    for kind, name in (("McpServer", "notes"), ("McpServer", "far"), ("Agent", "bot"), ("Gateway", "default")):
        admin.delete(API, kind, namespace, name)
    for kind, name in (("McpServer", "notes"), ("Agent", "bot"), ("Gateway", "default")):
        wait_for(f"{kind} {name} gone (the finalizer taken off)", lambda k=kind, n=name: admin.get(API, k, namespace, n) is None)  # type: ignore[misc]
    del pods


def test_the_chart_grants_only_what_the_operator_uses(
    real_cluster: RealCluster, admin: Kube, namespace: str, tmp_path: Path
) -> None:
    """Operator and webhook under the chart's identity through a full scenario with pods running.

    Every grant of the chart that the scenario never used is either in REVIEWED_UNUSED with its
    reason, or a test failure: remove it from the chart (or exercise it here).
    """
    docs = _rbac({})
    offset = real_cluster.audit_log.stat().st_size
    port = free_port()
    with chart_rbac(admin, docs):
        token = real_cluster.service_account_token(SYSTEM, "clawplane")
        config = real_cluster.write_kubeconfig(tmp_path / "operator.kubeconfig", token, "clawplane", namespace)
        hook = WebhookService(
            WebhookOptions(
                port=port, target=Target(url=f"https://127.0.0.1:{port}"), configuration="clawplane",
                secret="clawplane-webhook-tls", namespace=SYSTEM, namespaces=(namespace,),
            ),
            partial(load_connection, str(config)), list(CRD_KINDS.values()), tmp_path / "webhook",
        )  # fmt: skip
        pods = RealKubelet(real_cluster.admin(), tmp_path / "pods", (namespace,)).start()
        hook.start()
        try:
            assert hook.ready.wait(60), "the webhook did not start"
            with OperatorRun(config, tmp_path / "state", routes=pods.resolve, namespaces=()):
                full_scenario(pods, admin, namespace)
                wait_for("the webhook to refuse a blocked env var", lambda: webhook_refuses(admin, namespace))
        finally:
            hook.stop()
            pods.stop()
            admin.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, "clawplane")
            admin.delete("v1", "Secret", SYSTEM, "clawplane-webhook-tls")
    events = [e for e in audit.events(real_cluster.audit_log, offset) if e["user"]["username"] == SA_USER]
    refused = sorted({audit.key(e) for e in events if (e.get("responseStatus") or {}).get("code") == 403})
    assert not refused, f"the chart does not grant what the operator asked for: {refused}"
    used = {audit.key(e) for e in events if e.get("objectRef")}
    allowed = granted(docs)
    unused = allowed - used
    unexplained = sorted(unused - set(REVIEWED_UNUSED))
    assert not unexplained, f"granted by the chart and never used (remove them or say why): {unexplained}"
    stale = sorted(set(REVIEWED_UNUSED) - unused)
    assert not stale, f"REVIEWED_UNUSED names grants the operator does use now: {stale}"


def webhook_refuses(admin: Kube, namespace: str) -> bool:
    """A server-side dry run of an McpServer with a blocked env var, refused by the webhook."""
    probe = {"apiVersion": API, "kind": "McpServer", "metadata": {"name": "probe", "namespace": namespace},
             "spec": {"transport": "stdio", "command": "node", "env": {"LD_PRELOAD": "/x.so"}}}  # fmt: skip
    try:
        admin.apply(probe, dry_run=True)
    except ApiError as exc:
        return "clawplane:" in str(exc.status.get("message"))
    return False


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
