"""The admission webhook on the real API server: clawplane's diagnostics at ``kubectl apply`` time.

The webhook runs as ``clawplane k8s run --webhook-*`` runs it (``WebhookService``: its own thread,
HTTPS with a CA it keeps in a Secret) and registers a ValidatingWebhookConfiguration that the real
kube-apiserver calls over TLS at ``https://127.0.0.1:<port>`` (no Service can route here: no
kube-proxy). Each test's configuration only matches its own namespace and is deleted afterwards,
so other tests on the same control plane never meet it.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from tests.k8s.operator_run import OperatorRun, wait_for
from tests.k8s.real import audit
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube
from tests.oracles.runners import OracleRunner

from clawplane.k8s.adapter.reconciler import CRD_KINDS
from clawplane.k8s.admission.certs import TlsMaterial, expires, issue
from clawplane.k8s.admission.server import WebhookService
from clawplane.k8s.admission.settings import Target, WebhookOptions
from clawplane.k8s.admission.store import _encode
from clawplane.k8s.api.kubeconfig import load_connection

API = "clawplane.dev/v1alpha1"
WEBHOOKS = ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
DENIED = 'admission webhook "validate.clawplane.dev" denied the request: clawplane: '
pytestmark = pytest.mark.compat


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _dump(docs: list[dict[str, Any]]) -> str:
    from io import StringIO

    out = StringIO()
    YAML().dump_all(docs, out)
    return out.getvalue()


def server(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    """An McpServer manifest."""
    return {"apiVersion": API, "kind": "McpServer", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _refused_by_webhook(admin: Kube, namespace: str) -> bool:
    """A server-side dry run of a blocked env var: True once the API server calls the webhook."""
    from tests.k8s.real.client import ApiError

    try:
        admin.apply(server("probe", namespace, command="node", env={"LD_PRELOAD": "/x.so"}), dry_run=True)
    except ApiError as exc:
        return "clawplane:" in str(exc.status.get("message"))
    return False


class Webhook:
    """A started webhook and the way to stop it (as the operator's shutdown does)."""

    def __init__(self, cluster: RealCluster, namespace: str, home: Path, policy: str, recheck: float) -> None:
        self.port = _free_port()
        config = cluster.write_kubeconfig(home / "admin.kubeconfig", cluster.admin_token, "admin", namespace)
        self.options = WebhookOptions(
            port=self.port,
            target=Target(url=f"https://127.0.0.1:{self.port}"),
            configuration=f"clawplane-{namespace}",
            namespace=namespace,
            failure_policy=policy,
            namespaces=(namespace,),
            recheck_seconds=recheck,
        )
        self.service = WebhookService(
            self.options, partial(load_connection, str(config)), list(CRD_KINDS.values()), home / "state"
        )

    def served_certificate(self) -> bytes:
        """The PEM certificate a TLS handshake with the webhook presents now."""
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        with (
            socket.create_connection(("127.0.0.1", self.port), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            der = tls.getpeercert(binary_form=True)
        assert der is not None
        return ssl.DER_cert_to_PEM_cert(der).encode()


@pytest.fixture
def start_webhook(
    real_cluster: RealCluster, admin: Kube, namespace: str, tmp_path: Path
) -> Iterator[Callable[..., Webhook]]:
    """``start_webhook(policy)``: the webhook serving this namespace, in use by the API server."""
    started: list[Webhook] = []

    def start(policy: str = "Ignore", recheck: float = 3600.0) -> Webhook:
        hook = Webhook(real_cluster, namespace, tmp_path, policy, recheck)
        started.append(hook)
        hook.service.start()
        assert hook.service.ready.wait(60), "the webhook did not start within 60 s (see the log)"
        # The API server picks new configurations up from a watch: wait until it calls this one.
        wait_for("the API server to call the webhook", lambda: _refused_by_webhook(admin, namespace))
        return hook

    try:
        yield start
    finally:
        for hook in started:
            hook.service.stop()
            admin.delete(*WEBHOOKS, None, hook.options.configuration)


def test_a_bad_object_is_refused_with_clawplanes_code_path_and_hint(
    start_webhook: Callable[..., Webhook], kubectl_real: OracleRunner, admin: Kube, namespace: str
) -> None:
    start_webhook()
    blocked = _dump([server("bad", namespace, command="node", env={"LD_PRELOAD": "/x.so"})])
    said = (
        f"{DENIED}error[mcp.env-blocked] at spec.env.LD_PRELOAD: env 'LD_PRELOAD' is blocked for stdio servers "
        "(OpenClaw drops it at startup) (hint: remove it; variables that change how interpreters, linkers or "
        "shells start are not allowed)"
    )
    for mode in ([], ["--server-side"], ["--dry-run=server"]):
        refused = kubectl_real.run("apply", *mode, "-f", "-", input=blocked)
        assert refused.returncode == 1 and said in refused.stderr, (mode, refused.stderr)
    assert admin.get(API, "McpServer", namespace, "bad") is None

    # OpenClaw's own schema for what passes through Gateway.spec.config: CEL cannot say it.
    gateway = {"apiVersion": API, "kind": "Gateway", "metadata": {"name": "default", "namespace": namespace},
               "spec": {"config": {"gateway": {"port": "x"}}}}  # fmt: skip
    refused = kubectl_real.run("apply", "-f", "-", input=_dump([gateway]))
    assert refused.returncode == 1
    assert f"{DENIED}error[openclaw.type] at spec.config.gateway.port: expected an integer" in refused.stderr

    # What the CRD's CEL rules say is answered by the API server itself, before any webhook.
    cel = kubectl_real.run("apply", "-f", "-", input=_dump([server("empty", namespace, transport="stdio")]))
    assert cel.returncode == 1 and DENIED not in cel.stderr
    assert 'spec.command: Required value: "stdio" transport requires a non-empty command' in cel.stderr

    fine = kubectl_real.run("apply", "-f", "-", input=_dump([server("notes", namespace, command="node")]))
    assert fine.returncode == 0 and "Warning" not in fine.stderr, fine.stderr


def test_a_dangling_reference_is_a_warning_and_the_agent_converges_once_the_server_arrives(
    start_webhook: Callable[..., Webhook], kubectl_real: OracleRunner, admin: Kube, namespace: str,
    operator: OperatorRun,
) -> None:  # fmt: skip
    start_webhook()
    agent = {"apiVersion": API, "kind": "Agent", "metadata": {"name": "bot", "namespace": namespace},
             "spec": {"mcpServers": ["notes"]}}  # fmt: skip
    applied = kubectl_real.run("apply", "-f", "-", input=_dump([agent]))
    assert applied.returncode == 0, applied.stderr
    assert (
        "Warning: clawplane: [ref.unresolved] McpServer 'notes' is not declared (at spec.mcpServers[0]): "
        "used once it is applied, ResolvedRefs=False until then"
    ) in applied.stderr

    def refs(status: str) -> dict[str, Any] | None:
        found = admin.get(API, "Agent", namespace, "bot") or {}
        conditions = (found.get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "ResolvedRefs" and c["status"] == status), None)

    missing = wait_for("ResolvedRefs=False on the Agent", lambda: refs("False"))
    assert missing["reason"] == "RefNotFound" and "notes" in missing["message"]
    arrived = kubectl_real.run("apply", "-f", "-", input=_dump([server("notes", namespace, command="node")]))
    assert arrived.returncode == 0 and "Warning" not in arrived.stderr, arrived.stderr
    wait_for("ResolvedRefs=True once the McpServer exists", lambda: refs("True"))


def test_reviews_are_checked_against_watched_objects_not_lists(
    start_webhook: Callable[..., Webhook], kubectl_real: OracleRunner, admin: Kube, namespace: str,
    real_cluster: RealCluster,
) -> None:  # fmt: skip
    """Once its watches are in step, the webhook lists nothing per review, and still sees what arrived."""
    start_webhook()
    agent = _dump([{"apiVersion": API, "kind": "Agent", "metadata": {"name": "bot", "namespace": namespace},
                    "spec": {"mcpServers": ["notes"]}}])  # fmt: skip
    dangling = kubectl_real.run("apply", "--dry-run=server", "-f", "-", input=agent)
    assert dangling.returncode == 0 and "[ref.unresolved]" in dangling.stderr, dangling.stderr
    arrived = kubectl_real.run("apply", "-f", "-", input=_dump([server("notes", namespace, command="node")]))
    assert arrived.returncode == 0, arrived.stderr

    def resolved() -> bool:
        answer = kubectl_real.run("apply", "--dry-run=server", "-f", "-", input=agent)
        return answer.returncode == 0 and "Warning" not in answer.stderr

    wait_for("the webhook to see McpServer notes (its watch event arrives)", resolved)
    window = audit.AuditWindow(real_cluster.audit_log, "admin")
    for _ in range(5):
        assert resolved()
    window.settle(admin)
    listed = [
        audit.key(e) for e in window.mine()
        if e["verb"] == "list" and e.get("userAgent", "").startswith("clawplane-operator/")
        and (e.get("objectRef") or {}).get("apiGroup") == "clawplane.dev"
    ]  # fmt: skip
    assert listed == [], f"reviews listed the namespace: {listed}"


@pytest.mark.parametrize("policy", ["Ignore", "Fail"])
def test_with_the_webhook_down_the_failure_policy_decides(
    start_webhook: Callable[..., Webhook], kubectl_real: OracleRunner, admin: Kube, namespace: str, policy: str
) -> None:
    hook = start_webhook(policy)
    hook.service.stop()  # as the operator's shutdown: the configuration stays in place
    assert admin.get(*WEBHOOKS, None, hook.options.configuration) is not None
    blocked = _dump([server("bad", namespace, command="node", env={"LD_PRELOAD": "/x.so"})])
    answer = kubectl_real.run("apply", "-f", "-", input=blocked)
    if policy == "Ignore":
        # Documented: admitted on the CRD's own checks; the operator reports it Invalid once back.
        assert answer.returncode == 0, answer.stderr
        assert admin.get(API, "McpServer", namespace, "bad") is not None
    else:
        assert answer.returncode == 1
        assert 'failed calling webhook "validate.clawplane.dev"' in answer.stderr, answer.stderr
        assert admin.get(API, "McpServer", namespace, "bad") is None


def test_a_certificate_due_for_renewal_is_renewed_and_served_without_a_new_ca(
    start_webhook: Callable[..., Webhook], admin: Kube, namespace: str
) -> None:
    hook = start_webhook(recheck=0.5)
    secret = admin.get("v1", "Secret", namespace, hook.options.secret)
    assert secret is not None and secret["type"] == "kubernetes.io/tls"
    first = hook.served_certificate()
    assert expires(first) - datetime.now(UTC) > timedelta(days=80)
    # Put a certificate 80 days old (10 left, the renewal is due at 30) of the same CA in the Secret.
    import base64

    data = {k: base64.b64decode(v) for k, v in secret["data"].items()}
    aged = datetime.now(UTC) - timedelta(days=80)
    cert, key = issue(data["ca.crt"], data["ca.key"], {"127.0.0.1"}, aged)
    old = TlsMaterial(data["ca.crt"], data["ca.key"], cert, key)
    admin.apply({**secret, "metadata": {"name": secret["metadata"]["name"], "namespace": namespace},
                 "data": _encode(old)}, manager="test")  # fmt: skip
    renewed = wait_for(
        "a renewed certificate served",
        lambda: (c := hook.served_certificate()) not in (first, cert) and expires(c) - datetime.now(UTC) > timedelta(days=80) and c,
    )  # fmt: skip
    stored = admin.get("v1", "Secret", namespace, hook.options.secret)
    assert stored is not None and base64.b64decode(stored["data"]["ca.crt"]) == data["ca.crt"]
    assert base64.b64decode(stored["data"]["tls.crt"]) == renewed
    # The API server still trusts it (same CA bundle): reviews go on.
    assert _refused_by_webhook(admin, namespace)


def test_the_operator_process_serves_the_webhook_under_the_charts_identity(
    real_cluster: RealCluster, admin: Kube, namespace: str, tmp_path: Path, kubectl_real: OracleRunner
) -> None:
    """``clawplane k8s run --webhook-*`` as the chart's ServiceAccount: no refusal in the audit log."""
    import subprocess
    import sys

    from tests.compat.kubernetes.test_operator_rbac import SA_USER, SYSTEM, _rbac, chart_rbac

    port = _free_port()
    offset = real_cluster.audit_log.stat().st_size
    with chart_rbac(admin, _rbac({"watchNamespaces": [namespace]})):
        token = real_cluster.service_account_token(SYSTEM, "clawplane")
        config = real_cluster.write_kubeconfig(tmp_path / "kubeconfig", token, "clawplane", SYSTEM)
        (tmp_path / "metrics-token").write_text("webhook-test-metrics-token")
        cmd = [sys.executable, "-m", "clawplane", "k8s", "run", "-n", namespace, "--kubeconfig", str(config),
               "--state-dir", str(tmp_path / "state"), "--skills-mount-path", str(tmp_path / "skills"),
               "--metrics-port", "0", "--health-port", "0", "--no-leader-elect",
               "--webhook-port", str(port), "--webhook-url", f"https://127.0.0.1:{port}",
               "--webhook-configuration", "clawplane", "--webhook-secret", "clawplane-webhook-tls"]  # fmt: skip
        log = tmp_path / "operator.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_for("the operator's webhook in use", lambda: proc.poll() is None and _refused_by_webhook(admin, namespace), timeout=90)
            blocked = _dump([server("bad", namespace, command="node", env={"LD_PRELOAD": "/x.so"})])
            refused = kubectl_real.run("apply", "-f", "-", input=blocked)
            assert refused.returncode == 1 and f"{DENIED}error[mcp.env-blocked]" in refused.stderr
        finally:
            proc.terminate()
            proc.wait(30)
            admin.delete(*WEBHOOKS, None, "clawplane")
            admin.delete("v1", "Secret", SYSTEM, "clawplane-webhook-tls")
    mine = [e for e in audit.events(real_cluster.audit_log, offset) if e["user"]["username"] == SA_USER]
    webhook_calls = [e for e in mine if (e.get("objectRef") or {}).get("resource") in ("secrets", "validatingwebhookconfigurations")]
    assert webhook_calls, "the operator never touched its Secret or configuration"
    refused_calls = [e for e in mine if (e.get("responseStatus") or {}).get("code") == 403]
    assert not refused_calls, [(e["verb"], e["objectRef"]) for e in refused_calls]
