"""``clawplane k8s run`` as a real process on the real API server: converges, serves health and metrics, stops on SIGTERM.

It authenticates as the chart's ServiceAccount (tests/k8s/real/operator_cluster.py); no pods run.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import httpx
import pytest
from tests.k8s.operator_run import ROOT, is_true, wait_for
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube
from tests.k8s.real.operator_cluster import RELEASE, RealApi, real_operator_cluster

pytestmark = pytest.mark.compat


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(url: str, headers: dict[str, str] | None = None) -> str | None:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as resp:
            return str(resp.read().decode())
    except OSError:
        return None


def http_status(url: str, headers: dict[str, str]) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket listening on ``port`` (from /proc/net/tcp)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, _, hexport = local.partition(":")
        if state == "0A" and int(hexport, 16) == port:
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


def test_operator_process_converges_and_stops_cleanly(real_cluster: RealCluster, admin: Kube, tmp_path: Path) -> None:
    with real_operator_cluster(real_cluster, admin, tmp_path, start=False, kubelet=False) as cluster:
        _converge_and_stop(cluster.emu, cluster.namespace, tmp_path)


def _converge_and_stop(emulator: RealApi, ns: str, tmp_path: Path) -> None:
    metrics, health, ui = free_port(), free_port(), free_port()
    cmd = [sys.executable, "-m", "clawplane", "k8s", "run", "-n", ns, "--kubeconfig", str(emulator.kubeconfig)]
    cmd += [
        "--state-dir",
        str(tmp_path / "state"),
        "--metrics-port",
        str(metrics),
        "--health-port",
        str(health),
        "--skills-mount-path",
        str(tmp_path / "skills"),
        "--ui-port",
        str(ui),
        "--ui-namespace",
        ns,
    ]
    cmd += ["--log-format", "json", "--bridge-image", "example.org/clawplane:dev"]
    # As in the chart's pod: the Lease in the release namespace (POD_NAMESPACE), one Lease per test.
    cmd += ["--leader-election-id", f"clawplane-{ns}"]
    env = {**os.environ, "POD_NAMESPACE": RELEASE}
    # The Secret volume is optional: a token file that is not there still means a token, generated.
    cmd += ["--metrics-token-file", str(tmp_path / "no-secret" / "token")]
    log = tmp_path / "operator.log"
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        try:
            emulator.apply_object(
                {
                    "apiVersion": "clawplane.dev/v1alpha1",
                    "kind": "McpServer",
                    "metadata": {"name": "files", "namespace": ns},
                    "spec": {"transport": "stdio", "command": "npx", "args": ["-y", "some-server"]},
                }
            )
            wait_for(
                "Programmed",
                lambda: is_true(emulator.get("mcpservers", ns, "files"), "Programmed"),
                timeout=60,
            )
            server = emulator.get("mcpservers", ns, "files")
            assert server is not None and server["status"]["phase"] == "Starting"  # no kubelet runs here
            dep = emulator.get("deployments", ns, "mcp-files")
            assert dep is not None
            assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "example.org/clawplane:dev"
            # kopf answers 200 with a JSON body while its probes pass; urlopen raises on anything else.
            wait_for("liveness", lambda: http_get(f"http://127.0.0.1:{health}/healthz"))
            # Unless told otherwise, both listeners are loopback; /metrics needs the generated token.
            assert listening_addresses(metrics) == {"127.0.0.1"} and listening_addresses(health) == {
                "127.0.0.1"
            }
            token_file = tmp_path / "state" / "metrics-token"
            assert token_file.stat().st_mode & 0o777 == 0o600
            bearer = {"Authorization": f"Bearer {token_file.read_text().strip()}"}
            text = wait_for("metrics", lambda: http_get(f"http://127.0.0.1:{metrics}/metrics", bearer))
            assert 'clawplane_reconciles_total{result="applied"}' in text
            url = f"http://127.0.0.1:{metrics}"
            assert http_status(f"{url}/metrics", {}) == 401
            assert http_status(f"{url}/metrics", {"Authorization": "Bearer not-the-token"}) == 401
            assert (http_get(f"{url}/readyz") or "").startswith("ready") and http_get(
                f"{url}/healthz"
            ) == "ok\n"
            # A page whose name resolves to 127.0.0.1 (DNS rebinding) is refused, probes included.
            assert http_status(f"{url}/healthz", {"Host": "evil.example"}) == 421
            assert http_status(f"{url}/metrics", {**bearer, "Host": "evil.example"}) == 421
            # The dashboard: loopback, its generated token 0600, nothing before login, the namespace after.
            assert listening_addresses(ui) == {"127.0.0.1"}
            ui_token = tmp_path / "state" / "ui-token"
            assert ui_token.stat().st_mode & 0o777 == 0o600
            board = f"http://127.0.0.1:{ui}"
            with httpx.Client(base_url=board, headers={"Origin": board}, timeout=10) as client:
                assert client.get("/ui").status_code == 401
                login = client.post("/ui/login", data={"token": ui_token.read_text().strip()})
                assert login.status_code == 303
                overview = client.get("/ui").text
                assert 'data-key="McpServer/files"' in overview and f"Namespace {ns}" in overview
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)
    output = log.read_text()
    assert code == 0, output[-3000:]
    assert "Traceback" not in output
    assert "no /metrics token at" in output and "is the Secret missing?" in output
    assert '"message":' in output or '"msg":' in output  # --log-format json
