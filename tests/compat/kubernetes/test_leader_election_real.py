"""Two operator processes under the chart's identity on a real API server: one Lease, one writer.

Both run ``clawplane k8s run`` as the chart's ServiceAccount (each with its own TokenRequest token,
so the audit log tells them apart only by time: same user), with the Lease in the release
namespace, where only the chart's leader-election Role lets them write it. kill -9 of the leader:
the standby takes the Lease once it expires and converges a change made after the kill, creating
no child again. Short durations as in tests/integration/k8s/test_leader_election.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.compat.kubernetes.test_operator_rbac import SA_USER, SYSTEM, _rbac, chart_rbac
from tests.k8s.operator_run import wait_for
from tests.k8s.real import audit
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube

ROOT = Path(__file__).resolve().parents[3]
API = "clawplane.dev/v1alpha1"
LEASE_S, RENEW_S, RETRY_S = 5.0, 3.5, 0.5
SCHEDULING_SLACK_S = 3.0
STARTUP_S = 60.0
pytestmark = pytest.mark.compat


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _readyz(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
            return str(answer.read().decode()).strip()
    except OSError:
        return ""


@pytest.fixture
def start(real_cluster: RealCluster, admin: Kube, tmp_path: Path) -> Iterator[Any]:
    """``start(name, *args)``: an operator process as the chart's ServiceAccount; all killed at the end."""
    started: list[subprocess.Popen[bytes]] = []
    with chart_rbac(admin, _rbac({})):

        def launch(name: str, *extra: str) -> tuple[subprocess.Popen[bytes], int]:
            home = tmp_path / name
            home.mkdir()
            token = real_cluster.service_account_token(SYSTEM, "clawplane")
            config = real_cluster.write_kubeconfig(home / "kubeconfig", token, "clawplane", SYSTEM)
            port = _free_port()
            (home / "metrics-token").write_text("leader-election-metrics-token")
            scope = [] if "-n" in extra else ["-A"]  # other tests' namespaces stay out of a scoped run
            cmd = [sys.executable, "-m", "clawplane", "k8s", "run", *scope, "--kubeconfig", str(config),
                   "--state-dir", str(home / "state"), "--skills-mount-path", str(home / "skills"),
                   "--metrics-port", str(port), "--health-port", "0", "--log-format", "json",
                   "--metrics-token-file", str(home / "metrics-token"),
                   "--leader-elect-lease-duration", f"{LEASE_S:g}", "--leader-elect-renew-deadline",
                   f"{RENEW_S:g}", "--leader-elect-retry-period", f"{RETRY_S:g}", *extra]  # fmt: skip
            with (home / "operator.log").open("wb") as out:
                proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
            started.append(proc)
            return proc, port

        try:
            yield launch
        finally:
            for proc in started:
                if proc.poll() is None:
                    proc.kill()
                proc.wait(timeout=30)


def _args(admin: Kube, namespace: str) -> list[str]:
    dep = admin.get("apps/v1", "Deployment", namespace, "mcp-files") or {}
    containers = ((((dep.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or [
        {}
    ]
    return list(containers[0].get("command") or [])


def test_a_standby_under_the_charts_identity_takes_over_after_kill_9(
    real_cluster: RealCluster, admin: Kube, namespace: str, start: Any
) -> None:
    # Scoped to this test's namespace: a cluster-wide standby would also take over the objects
    # other tests left on this control plane, and its writes there are not this test's subject.
    a, a_port = start("a", "-n", namespace)
    wait_for("a leads", lambda: _readyz(a_port) == "ready (leader)", timeout=STARTUP_S)
    _, b_port = start("b", "-n", namespace)
    wait_for("b is a standby", lambda: _readyz(b_port) == "ready (standby)", timeout=STARTUP_S)
    files = {"apiVersion": API, "kind": "McpServer", "metadata": {"name": "files", "namespace": namespace},
             "spec": {"transport": "stdio", "command": "npx", "args": ["-y", "files-server"]}}  # fmt: skip
    admin.apply(files)

    def programmed() -> bool:
        obj = admin.get(API, "McpServer", namespace, "files") or {}
        return any(c["type"] == "Programmed" and c["status"] == "True"
                   for c in (obj.get("status") or {}).get("conditions") or [])  # fmt: skip

    # Every child is written before the status says Programmed: the leader is done with the server.
    wait_for("the leader to program McpServer files", programmed)
    assert _args(admin, namespace)
    lease = admin.get("coordination.k8s.io/v1", "Lease", SYSTEM, "clawplane-operator")
    assert lease is not None, "no Lease in the release namespace"
    a_identity = lease["spec"]["holderIdentity"]

    a.kill()  # SIGKILL: no release, the Lease must expire
    a.wait(timeout=30)
    killed = time.monotonic()
    offset = real_cluster.audit_log.stat().st_size
    files["spec"]["args"].append("--changed-after-kill")
    admin.apply(files)
    wait_for(
        "b holds the Lease",
        lambda: (
            (lease := admin.get("coordination.k8s.io/v1", "Lease", SYSTEM, "clawplane-operator"))
            and lease["spec"].get("holderIdentity") not in ("", a_identity)
        ),
        timeout=30,
    )
    takeover = time.monotonic() - killed
    wait_for("b converged the change", lambda: "--changed-after-kill" in _args(admin, namespace), timeout=30)
    assert takeover > LEASE_S - RETRY_S - 0.1, f"took the Lease after {takeover:.2f}s: before it expired"
    assert takeover < LEASE_S + 1.2 * RETRY_S + SCHEDULING_SLACK_S, f"takeover took {takeover:.2f}s"
    wait_for("b reports leader", lambda: _readyz(b_port) == "ready (leader)")
    after = [e for e in audit.events(real_cluster.audit_log, offset) if e["user"]["username"] == SA_USER]
    refused = [e for e in after if e.get("responseStatus", {}).get("code") == 403]
    assert not refused, json.dumps(refused[:3])
    created = [
        (ref.get("resource"), ref.get("subresource"), ref.get("name"))
        for e in after
        if e["verb"] == "create"
        and (ref := e.get("objectRef") or {}).get("resource") not in ("events", "leases")
    ]
    assert not created, f"the standby created again what the leader had made: {created}"
