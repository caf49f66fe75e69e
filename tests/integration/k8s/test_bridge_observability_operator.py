"""The namespace Gateway's traces reach the bridge pods the operator runs, end to end, on the emulator.

The operator (a real process) renders the hosted server's Deployment from the Gateway's
``spec.observability``; the process kubelet runs the pod — ``clawplane bridge`` around the fixture
server, its trace header read from the Secret by ``secretKeyRef`` — and the bridge exports the
spans of the operator's own tool discovery to a real loopback OTLP receiver. A changed Gateway
rolls the pod (its config hash); a header no pod can read is reported on the Gateway. Run on the
emulator: the real API server's suite (tests/compat/kubernetes) needs the kube-apiserver oracle,
which an ordinary run may not have.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from tests.k8s.cluster import GATEWAY, NS, Cluster, apply_all, secret, server
from tests.k8s.operator_run import until
from tests.support.otlp_receiver import otlp_receiver

CANARY = "otel-header-canary-P4w8Zr"


def gateway(traces: dict[str, Any]) -> dict[str, Any]:
    return {**GATEWAY, "spec": {"observability": {"traces": traces}}}


def test_bridge_pods_export_to_the_gateways_collector_and_roll_when_it_changes(cluster: Cluster) -> None:
    with otlp_receiver() as receiver:
        otel = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "otel", "namespace": NS},
            "data": {"auth": base64.b64encode(CANARY.encode()).decode()},
        }
        header = {"Authorization": {"valueFrom": {"secretKeyRef": {"name": "otel", "key": "auth"}}}}
        apply_all(cluster, secret("x"), otel, gateway({"endpoint": receiver.url, "serviceName": "demo-bridges",
                                                       "headers": header}), server())  # fmt: skip
        cluster.ready("notes")
        dep = cluster.get("deployments", "mcp-notes")
        assert dep is not None
        command = dep["spec"]["template"]["spec"]["containers"][0]["command"]
        flags = command[: command.index("--")]
        assert flags[flags.index("--traces-endpoint") + 1] == receiver.url
        assert "--audit-log" in flags and "Authorization=CLAWPLANE_TRACE_HEADER_0" in flags
        assert CANARY not in json.dumps(dep) and base64.b64encode(CANARY.encode()).decode() not in json.dumps(dep)

        spans = receiver.wait_for(
            lambda found: any(s.kind == "SERVER" and s.name == "tools/list" for s in found), timeout=30
        )
        listed = next(s for s in spans if s.kind == "SERVER" and s.name == "tools/list")
        assert listed.resource["service.name"] == "demo-bridges"
        assert listed.attributes["clawplane.server"] == "notes"
        assert {h.get("authorization") for _, _, h in receiver.bodies} == {CANARY}

        first = cluster.template_hash()
        renamed = {"endpoint": receiver.url, "serviceName": "renamed", "headers": header}
        cluster.patch_spec("gateways", "default", gateway(renamed)["spec"])
        until(cluster.emu, "the pod template to roll", lambda: cluster.template_hash() != first)

        operator_only = {"endpoint": receiver.url, "headers": {"x-api-key": {"valueFrom": {"env": "OPERATOR_ONLY"}}}}
        cluster.patch_spec("gateways", "default", gateway(operator_only)["spec"])
        cond = cluster.condition("gateways", "default", "ResolvedRefs", status="False", reason="UnsupportedInCluster")
        assert "headers.x-api-key: valueFrom.env" in cond["message"] and "valueFrom.secretKeyRef" in cond["message"]
        dep = cluster.get("deployments", "mcp-notes")
        assert dep is not None and "OPERATOR_ONLY" not in json.dumps(dep)
        until(
            cluster.emu,
            "a Warning Event on the Gateway",
            lambda: any(
                (e.get("reason"), e.get("type"), (e.get("regarding") or {}).get("kind"))
                == ("UnsupportedInCluster", "Warning", "Gateway")
                for e in cluster.emu.list("events.events.k8s.io", NS)
            ),
        )
