"""``clawplane k8s run`` as a real process against the emulator: converges, serves health and metrics, stops on SIGTERM."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.k8s.emulator import EmulatorThread
from tests.k8s.operator_run import ROOT, install_crds, is_true, wait_for


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return str(resp.read().decode())
    except OSError:
        return None


def test_operator_process_converges_and_stops_cleanly(emulator: EmulatorThread, tmp_path: Path) -> None:
    install_crds(emulator)
    assert emulator.kubeconfig is not None
    metrics, health = free_port(), free_port()
    cmd = [sys.executable, "-m", "clawplane", "k8s", "run", "-A", "--kubeconfig", str(emulator.kubeconfig)]
    cmd += [
        "--state-dir",
        str(tmp_path / "state"),
        "--metrics-port",
        str(metrics),
        "--health-port",
        str(health),
        "--skills-mount-path",
        str(tmp_path / "skills"),
    ]
    cmd += ["--log-format", "json", "--bridge-image", "example.org/clawplane:dev"]
    log = tmp_path / "operator.log"
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            emulator.apply_object(
                {
                    "apiVersion": "clawplane.dev/v1alpha1",
                    "kind": "McpServer",
                    "metadata": {"name": "files", "namespace": "default"},
                    "spec": {"transport": "stdio", "command": "npx", "args": ["-y", "some-server"]},
                }
            )
            wait_for(
                "Programmed",
                lambda: is_true(emulator.get("mcpservers", "default", "files"), "Programmed"),
                timeout=60,
            )
            server = emulator.get("mcpservers", "default", "files")
            assert server is not None and server["status"]["phase"] == "Starting"  # the emulator runs no pods
            dep = emulator.get("deployments", "default", "mcp-files")
            assert dep is not None
            assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "example.org/clawplane:dev"
            # kopf answers 200 with a JSON body while its probes pass; urlopen raises on anything else.
            wait_for("liveness", lambda: http_get(f"http://127.0.0.1:{health}/healthz"))
            text = wait_for("metrics", lambda: http_get(f"http://127.0.0.1:{metrics}/metrics"))
            assert 'clawplane_reconciles_total{result="applied"}' in text
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)
    output = log.read_text()
    assert code == 0, output[-3000:]
    assert "Traceback" not in output
    assert '"message":' in output or '"msg":' in output  # --log-format json
