"""The real kubectl drives examples/k8s/ through the operator running against the API emulator.

kubectl applies the CRDs and the example (with its default ``--validate=strict``, which the
emulator enforces), waits on the status conditions the operator writes, rotates the Secret
and deletes resources (waiting on the operator's finalizer). The emulator's kubelet runs the
example's server pod for real: ``clawplane bridge`` around the independent ``mcp-server-time``
peer; the operator waits for its readiness and discovers tools through the Service.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.k8s.emulator import EmulatorThread
from tests.k8s.operator_run import OperatorRun, load_yaml_docs, wait_for
from tests.oracles.runners import OpenClawOracle, OracleRunner

ROOT = Path(__file__).resolve().parents[2]
NS = "clawplane-demo"
pytestmark = pytest.mark.compat


@pytest.fixture
def kube(kubectl: OracleRunner, tmp_path: Path) -> Iterator[tuple[OracleRunner, EmulatorThread]]:
    with EmulatorThread() as emu:
        kubeconfig = emu.write_kubeconfig(kubectl.env["KUBECONFIG"])
        kubectl.run("apply", "-f", str(ROOT / "manifests" / "crds"), check=True)
        kubectl.run("wait", "--for=condition=Established", "crd", "--all", "--timeout=30s", check=True)
        kubelet = emu.start_kubelet(tmp_path / "pods")
        op = OperatorRun(kubeconfig, tmp_path / "state", routes=kubelet.resolve).start()
        try:
            yield kubectl, emu
        finally:
            op.stop()


def get_json(kubectl: OracleRunner, *args: str) -> Any:
    return json.loads(kubectl.run("get", *args, "-n", NS, "-o", "json", check=True).stdout)


def template_hash(kubectl: OracleRunner) -> str:
    out = kubectl.run(
        "get",
        "deployment",
        "mcp-time",
        "-n",
        NS,
        "-o",
        "jsonpath={.spec.template.metadata.annotations.clawplane\\.dev/config-hash}",
        check=True,
    )
    return out.stdout.strip()


@pytest.mark.timeout(240)  # kubectl and OpenClaw each take seconds to start here
def test_examples_converge_roll_and_clean_up(
    kube: tuple[OracleRunner, EmulatorThread], openclaw: OpenClawOracle, tmp_path: Path
) -> None:
    kubectl, _ = kube
    applied = kubectl.run("apply", "-R", "-f", str(ROOT / "examples" / "k8s"), check=True)
    assert "mcpserver.clawplane.dev/time created" in applied.stdout

    for name in ("time", "time-http"):
        kubectl.run(
            "wait", "--for=condition=Ready", f"mcpserver/{name}", "-n", NS, "--timeout=60s", check=True
        )
    for ref in ("agent/assistant", "gateway/default", "channel/team-telegram", "skill/house-style"):
        kubectl.run("wait", "--for=condition=Programmed", ref, "-n", NS, "--timeout=60s", check=True)

    time_server = get_json(kubectl, "mcpserver", "time")
    assert "time__get_current_time" in time_server["status"]["tools"]
    assert time_server["status"]["observedGeneration"] == time_server["metadata"]["generation"]
    deployments = [d["metadata"]["name"] for d in get_json(kubectl, "deployments")["items"]]
    assert deployments == ["mcp-time"]  # the streamable-http server needs no pod
    config_maps = {c["metadata"]["name"] for c in get_json(kubectl, "configmaps")["items"]}
    assert {"clawplane-agent-assistant", "clawplane-gateway-default"} <= config_maps
    agent_cm = get_json(kubectl, "configmap", "clawplane-agent-assistant")
    assert "house-style" in agent_cm["data"]["skills-prompt.txt"]
    gateway_cm = get_json(kubectl, "configmap", "clawplane-gateway-default")["data"]
    secret_env = {
        e["name"]: e["valueFrom"]["secretKeyRef"] for e in json.loads(gateway_cm["secret-env.json"])
    }
    assert {"name": "demo-tokens", "key": "telegram-bot-token"} in secret_env.values()
    token_ref = json.loads(gateway_cm["openclaw.json"])["channels"]["telegram"]["botToken"]
    assert token_ref["source"] == "env" and token_ref["id"] in secret_env
    assert "123456:replace-me" not in json.dumps(gateway_cm)
    # The hosted server's entry sends the generated bridge token through the gateway pod's env.
    auth = json.loads(gateway_cm["openclaw.json"])["mcp"]["servers"]["time"]["headers"]["Authorization"]
    assert auth.startswith("Bearer ${CLAWPLANE_SECRET_MCP_TIME_TOKEN_TOKEN_")
    assert secret_env[auth[len("Bearer ${") : -1]] == {"name": "mcp-time-token", "key": "token"}
    config = tmp_path / "openclaw.json"
    config.write_text(gateway_cm["openclaw.json"], encoding="utf-8")
    openclaw.use_config(config)
    checked = openclaw.run("config", "validate", "--json")
    assert checked.returncode == 0 and json.loads(checked.stdout)["valid"], checked.stdout + checked.stderr

    before = template_hash(kubectl)
    rotated = load_yaml_docs(ROOT / "examples" / "k8s" / "01-secret.yaml")[0]
    rotated["stringData"]["time-api-token"] = "rotated"
    kubectl.run("apply", "-f", "-", input=json.dumps(rotated), check=True)
    wait_for("the pod template to roll after the Secret rotation", lambda: template_hash(kubectl) != before)

    kubectl.run("delete", "mcpserver", "time-http", "-n", NS, "--timeout=60s", check=True)
    kubectl.run(
        "delete",
        "-R",
        "-f",
        str(ROOT / "examples" / "k8s" / "resources"),
        "--ignore-not-found",
        "--timeout=60s",
        check=True,
    )
    assert get_json(kubectl, "deployments")["items"] == []
    assert get_json(kubectl, "services")["items"] == []
    remaining = [c["metadata"]["name"] for c in get_json(kubectl, "configmaps")["items"]]
    assert not [n for n in remaining if n.startswith("clawplane-")]
