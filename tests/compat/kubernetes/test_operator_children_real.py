"""Children the operator owns, repairs and reports on, on the real API server with the process kubelet.

The operator runs under the chart's identity (tests/k8s/real/operator_cluster.py); what it wrote
is read from the API server's audit log.

Each test is one bullet of issue 21's "Why", and fails on the operator that only compared a
spec-hash annotation, took over foreign objects, hid API errors in its log and wrote
conditions that did not match the cluster.
"""

from __future__ import annotations

import base64
import copy
import json
import logging
import re
import sys
from typing import Any

import httpx
import pytest
from tests.k8s import tables
from tests.k8s.cluster import GATEWAY, NS, SERVER_PY, agent, apply_all, secret, server
from tests.k8s.operator_run import until
from tests.k8s.real.operator_cluster import RealOperatorCluster as Cluster

pytestmark = pytest.mark.compat

IMAGE_PATH = ("spec", "template", "spec", "containers", 0, "image")


def dig(obj: Any, *path: Any) -> Any:
    for part in path:
        obj = obj[part]
    return obj


def events_about(cluster: Cluster, kind: str, name: str) -> list[dict[str, Any]]:
    return [
        e
        for e in cluster.emu.list("events.events.k8s.io", NS)
        if e["regarding"]["kind"] == kind and e["regarding"]["name"] == name
    ]


def telegram(agent_name: str) -> dict[str, Any]:
    """Channel ``tg`` of ``agent_name``, its bot token in the Secret ``tokens``."""
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "Channel",
        "metadata": {"name": "tg", "namespace": NS},
        "spec": {
            "type": "telegram",
            "agent": agent_name,
            "dmPolicy": "allowlist",
            "allowFrom": ["123"],
            "credentials": {"botToken": {"valueFrom": {"secretKeyRef": {"name": "tokens", "key": "token"}}}},
        },
    }


def edit(cluster: Cluster, plural: str, name: str, change: Any) -> None:
    """What ``kubectl edit``/``set`` does: change the live object in place."""
    obj = cluster.get(plural, name)
    assert obj is not None
    change(obj)
    cluster.emu.apply_object(obj)


def test_drift_on_children_is_repaired_promptly(cluster: Cluster) -> None:
    apply_all(cluster, secret("x"), server(), agent(["notes"]), GATEWAY)
    cluster.ready("notes")
    gateway_cm = until(cluster.emu, "gateway ConfigMap", lambda: cluster.get("configmaps", "clawplane-gateway-default"))
    image = dig(cluster.get("deployments", "mcp-notes"), *IMAGE_PATH)

    # kubectl set image deployment/mcp-notes server=evil:latest
    edit(cluster, "deployments", "mcp-notes", lambda d: d["spec"]["template"]["spec"]["containers"][0].update(image="evil:latest"))
    until(cluster.emu, "the image written back", lambda: dig(cluster.get("deployments", "mcp-notes"), *IMAGE_PATH) == image)

    # kubectl set env deployment/mcp-notes EXTRA=1
    edit(cluster, "deployments", "mcp-notes", lambda d: d["spec"]["template"]["spec"]["containers"][0]["env"].append({"name": "EXTRA", "value": "1"}))
    until(
        cluster.emu,
        "the added env var removed",
        lambda: all(e["name"] != "EXTRA" for e in dig(cluster.get("deployments", "mcp-notes"), "spec", "template", "spec", "containers", 0, "env")),
    )

    # kubectl edit configmap/clawplane-gateway-default
    edit(cluster, "configmaps", "clawplane-gateway-default", lambda cm: cm["data"].update({"openclaw.json": "{}"}))
    until(
        cluster.emu,
        "openclaw.json written back",
        lambda: (cluster.get("configmaps", "clawplane-gateway-default") or {}).get("data") == gateway_cm["data"],
    )

    # A deleted ConfigMap comes back on the watch event, not at the next resync (an hour here).
    cluster.emu.delete_object("configmaps", NS, "clawplane-agent-bot")
    until(cluster.emu, "the agent ConfigMap recreated", lambda: cluster.get("configmaps", "clawplane-agent-bot"), timeout=20)
    until(  # Events are posted in the background: wait for it, do not race it
        cluster.emu,
        "an Updated Event naming the image",
        lambda: any(
            "spec.template.spec.containers[0].image" in e["note"]
            for e in events_about(cluster, "McpServer", "notes")
            if e["reason"] == "Updated"
        ),
    )


def test_a_foreign_config_map_is_a_conflict_and_is_never_touched(cluster: Cluster) -> None:
    foreign = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "clawplane-agent-mine", "namespace": NS}, "data": {"mine": "keep"}}
    cluster.emu.apply_object(foreign)
    apply_all(cluster, secret("x"), server(), agent(["notes"], name="mine"), agent(["notes"]), GATEWAY)
    cond = cluster.condition("agents", "mine", "Programmed", status="False", reason="Conflict")
    assert f"ConfigMap {cluster.namespace}/clawplane-agent-mine already exists and is not managed by clawplane" in cond["message"]
    assert cluster.condition("agents", "mine", "Ready", status="False", reason="Conflict")
    cluster.ready("notes")  # everything else keeps reconciling
    until(cluster.emu, "the other agent's ConfigMap", lambda: cluster.get("configmaps", "clawplane-agent-bot"))
    stored = cluster.get("configmaps", "clawplane-agent-mine")
    assert stored is not None and stored["data"] == {"mine": "keep"} and "ownerReferences" not in stored["metadata"]
    assert {verb for verb, _, _ in cluster.emu.writes("configmaps", NS, "clawplane-agent-mine")} <= {"POST"}
    warnings = until(
        cluster.emu,
        "a Warning Event",
        lambda: [e for e in events_about(cluster, "Agent", "mine") if e["type"] == "Warning"],
    )
    assert warnings[0]["reason"] == "Conflict"

    cluster.emu.delete_object("agents", NS, "mine")
    until(cluster.emu, "Agent mine gone", lambda: cluster.get("agents", "mine") is None)
    assert (cluster.get("configmaps", "clawplane-agent-mine") or {}).get("data") == {"mine": "keep"}


def test_a_foreign_deployment_is_a_conflict_and_other_servers_keep_running(cluster: Cluster) -> None:
    victim = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "mcp-victim", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "victim"}},
            "template": {"metadata": {"labels": {"app": "victim"}}, "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}},
        },
    }
    cluster.emu.apply_object(victim)
    before = cluster.get("deployments", "mcp-victim")
    apply_all(cluster, secret("x"), server("victim"), server())
    cond = cluster.condition("mcpservers", "victim", "Programmed", status="False", reason="Conflict")
    assert f"Deployment {cluster.namespace}/mcp-victim already exists" in cond["message"]
    cluster.ready("notes")
    assert {verb for verb, _, _ in cluster.emu.writes("deployments", NS, "mcp-victim")} <= {"POST"}
    after = cluster.get("deployments", "mcp-victim")
    assert after is not None and before is not None and after["spec"] == before["spec"]
    assert cluster.get("services", "mcp-victim") is None or "ownerReferences" in cluster.get("services", "mcp-victim")["metadata"]


def test_a_refused_child_reports_the_api_servers_own_error(cluster: Cluster) -> None:
    bad_env = server("badenv")
    bad_env["spec"]["env"] = {"A=B": "1"}
    bad_resources = server("greedy", resources={"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}})
    apply_all(cluster, secret("x"), bad_env, bad_resources, server())
    env_cond = cluster.condition("mcpservers", "badenv", "Programmed", status="False", reason="ChildRejected")
    assert 'Deployment.apps "mcp-badenv" is invalid' in env_cond["message"]
    assert 'env[1].name: Invalid value: "A=B"' in env_cond["message"]
    cond = cluster.condition("mcpservers", "greedy", "Ready", status="False", reason="ChildRejected")
    assert "resources.requests: Invalid value: \"2Gi\": must be less than or equal to memory limit of 1Gi" in cond["message"]
    greedy = cluster.get("mcpservers", "greedy")
    assert greedy is not None
    accepted = next(c for c in greedy["status"]["conditions"] if c["type"] == "Accepted")
    assert accepted["status"] == "True"  # the spec is valid; the cluster refused what it implies
    cluster.ready("notes")
    warnings = until(
        cluster.emu,
        "a Warning Event",
        lambda: [e for e in events_about(cluster, "McpServer", "greedy") if e["type"] == "Warning"],
    )
    assert warnings[0]["reason"] == "ChildRejected" and "memory limit" in warnings[0]["note"]


def test_events_name_every_child_created(cluster: Cluster) -> None:
    apply_all(cluster, secret("x"), server(), agent(["notes"]), GATEWAY)
    cluster.ready("notes")
    until(cluster.emu, "gateway ConfigMap", lambda: cluster.get("configmaps", "clawplane-gateway-default"))
    wanted = {("Deployment", "mcp-notes"), ("Service", "mcp-notes"), ("ConfigMap", "clawplane-agent-bot")}
    wanted |= {("Secret", "mcp-notes-token"), ("NetworkPolicy", "mcp-notes")}
    wanted |= {("ConfigMap", "clawplane-gateway-default")}

    def created() -> set[tuple[str, str]]:
        return {
            (e["related"]["kind"], e["related"]["name"])
            for e in cluster.emu.list("events.events.k8s.io", NS)
            if e["reason"] == "Created" and e["reportingController"] == "clawplane.dev/operator"
        }

    until(cluster.emu, "a Created Event for every child", lambda: wanted <= created())  # posted in the background


def test_status_matches_the_cluster(cluster: Cluster) -> None:
    stuck = server("stuck", args=["--no-such-flag"])  # the server exits at once: the pod never gets ready
    far = {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": "far", "namespace": NS},
        "spec": {"transport": "streamable-http", "url": "http://127.0.0.1:1/mcp"},
    }
    channel = telegram("fine")
    apply_all(cluster, secret("x"), server(), stuck, far, agent(["notes", "stuck"]), agent(["notes"], name="fine"), channel, SKILL, GATEWAY)
    notes = cluster.ready("notes")
    assert notes["status"]["toolCount"] == len(notes["status"]["tools"]) > 0

    programmed = cluster.condition("mcpservers", "far", "Programmed", status="True", reason="Rendered")
    assert "could not reach it" in programmed["message"]
    assert cluster.condition("mcpservers", "far", "Ready", status="False")
    gateway = until(cluster.emu, "openclaw.json", lambda: cluster.get("configmaps", "clawplane-gateway-default"))
    assert "far" in json.loads(gateway["data"]["openclaw.json"])["mcp"]["servers"]

    waiting = cluster.condition("agents", "bot", "Ready", status="False", reason="ServersNotReady")
    assert "McpServer stuck is" in waiting["message"]
    fine = cluster.condition("agents", "fine", "Ready", status="True")
    assert fine["reason"] == "Ready"

    # Every printer column of every kind reads a field the operator (or the user) really writes.
    kinds = (("mcpservers", "notes"), ("agents", "fine"), ("channels", "tg"), ("skills", "house-style"), ("gateways", "default"))
    for plural, name in kinds:
        cluster.condition(plural, name, "Ready", status="True")
        obj = cluster.get(plural, name)
        crd = cluster.emu.get("customresourcedefinitions", None, f"{plural}.clawplane.dev")
        assert obj is not None and crd is not None
        for column in crd["spec"]["versions"][0]["additionalPrinterColumns"]:
            assert tables.find(obj, column["jsonPath"]), f"{plural} column {column['name']} reads {column['jsonPath']}: nothing there"


def test_watches_are_filtered_by_the_api_server(cluster: Cluster) -> None:
    apply_all(cluster, secret("x"), server())
    cluster.ready("notes")
    opened = cluster.emu.watches()
    for plural in ("deployments", "services", "configmaps"):
        mine = [w for w in opened if w[0] == plural]
        assert mine and all(selector == "app.kubernetes.io/managed-by=clawplane" for _, _, selector in mine), mine
    secrets = [w for w in opened if w[0] == "secrets"]
    assert secrets and all(selector or namespace == cluster.namespace for _, namespace, selector in secrets), secrets
    assert any(namespace == cluster.namespace and selector is None for _, namespace, selector in secrets)  # referenced Secrets

    # A rotated referenced Secret rolls the pods through that watch.
    before = cluster.template_hash()
    rotated = copy.deepcopy(secret("y"))
    cluster.emu.apply_object(rotated)
    until(cluster.emu, "the pod template to roll", lambda: cluster.template_hash() != before, timeout=20)
    assert sys.executable in dig(cluster.get("deployments", "mcp-notes"), "spec", "template", "spec", "containers", 0, "command")
    assert str(SERVER_PY) in dig(cluster.get("deployments", "mcp-notes"), "spec", "template", "spec", "containers", 0, "command")


def test_bridge_pods_require_a_generated_token_the_gateway_and_discovery_send(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    apply_all(cluster, secret("x"), server(), agent(["notes"]), GATEWAY)
    cluster.ready("notes")  # the operator's discovery went through the bridge's token check
    token_secret = cluster.get("secrets", "mcp-notes-token")
    assert token_secret is not None
    owner = token_secret["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("McpServer", "notes", True)
    token = base64.b64decode(token_secret["data"]["token"]).decode()
    assert len(token) >= 32 and base64.b64decode(token_secret["data"]["authorization"]).decode() == f"Bearer {token}"

    pod = dig(cluster.get("deployments", "mcp-notes"), "spec", "template", "spec")
    command = pod["containers"][0]["command"]
    assert command[command.index("--token-file") + 1] == "/var/run/clawplane/token/token"
    assert {"name": "token", "mountPath": "/var/run/clawplane/token", "readOnly": True} in pod["containers"][0]["volumeMounts"]
    volume = next(v for v in pod["volumes"] if v["name"] == "token")
    assert volume["secret"]["secretName"] == "mcp-notes-token" and volume["secret"]["defaultMode"] == 0o400

    url = cluster.kubelet.resolve(f"http://mcp-notes.{cluster.namespace}.svc:8080/mcp")
    assert url is not None
    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    assert httpx.post(url, json=hello, headers=headers, timeout=30).status_code == 401
    authed = httpx.post(url, json=hello, headers={**headers, "Authorization": f"Bearer {token}"}, timeout=30)
    assert authed.status_code != 401, authed.text

    gateway = until(cluster.emu, "gateway ConfigMap", lambda: cluster.get("configmaps", "clawplane-gateway-default"))
    entry = json.loads(gateway["data"]["openclaw.json"])["mcp"]["servers"]["notes"]
    header = entry["headers"]["Authorization"]
    assert header.startswith("Bearer ${CLAWPLANE_SECRET_MCP_NOTES_TOKEN_TOKEN_") and header.endswith("}")
    env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in json.loads(gateway["data"]["secret-env.json"])}
    assert env[header[len("Bearer ${") : -1]] == {"name": "mcp-notes-token", "key": "token"}

    policy = cluster.get("networkpolicies", "mcp-notes")
    assert policy is not None
    pod_labels = cluster.get("deployments", "mcp-notes")["spec"]["template"]["metadata"]["labels"]
    assert all(pod_labels[k] == v for k, v in policy["spec"]["podSelector"]["matchLabels"].items())
    (rule,) = policy["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 8080}]
    assert {"podSelector": {"matchExpressions": [{"key": "clawplane.dev/gateway", "operator": "Exists"}]}} in rule["from"]

    # Deleting the Secret rotates the token: a new one, the pod rolls, discovery follows.
    before = dig(cluster.get("deployments", "mcp-notes"), "spec", "template", "metadata", "annotations")
    cluster.emu.delete_object("secrets", NS, "mcp-notes-token")
    rotated = until(
        cluster.emu,
        "a new token",
        lambda: (s := cluster.get("secrets", "mcp-notes-token")) and base64.b64decode(s["data"]["token"]).decode() != token and s,
    )
    until(
        cluster.emu,
        "the pod to roll",
        lambda: dig(cluster.get("deployments", "mcp-notes"), "spec", "template", "metadata", "annotations") != before,
    )
    cluster.ready("notes")
    everything = json.dumps([cluster.emu.list(k, NS) for k in ("configmaps", "mcpservers", "agents", "deployments")])
    for value in (token, base64.b64decode(rotated["data"]["token"]).decode()):
        assert value not in everything and value not in caplog.text


def test_a_vanished_reference_keeps_the_last_good_gateway_config(cluster: Cluster) -> None:
    channel = telegram("bot")
    apply_all(cluster, secret("x"), server(), server("other"), agent(["notes", "other"]), channel, GATEWAY)
    cluster.ready("other")

    def rendered() -> dict[str, Any] | None:
        gw = cluster.get("configmaps", "clawplane-gateway-default")
        config = json.loads(gw["data"]["openclaw.json"]) if gw else {}
        agents = set((config.get("agents") or {}).get("entries") or {})
        return gw if "bot" in agents and config.get("channels") and "other" in config["mcp"]["servers"] else None

    good = until(cluster.emu, "the gateway config with agent, channel and both servers", rendered)
    agent_cm = until(cluster.emu, "the agent ConfigMap", lambda: cluster.get("configmaps", "clawplane-agent-bot"))

    cluster.emu.delete_object("mcpservers", NS, "other")
    until(cluster.emu, "McpServer other gone", lambda: cluster.get("mcpservers", "other") is None)
    refs = cluster.condition("agents", "bot", "ResolvedRefs", status="False", reason="RefNotFound")
    assert "other" in refs["message"]
    serving = cluster.condition("agents", "bot", "Programmed", status="True", reason="LastGood")
    assert "clawplane-agent-bot" in serving["message"]
    gateway_refs = cluster.condition("gateways", "default", "ResolvedRefs", status="False", reason="RefNotFound")
    assert "clawplane-gateway-default" in gateway_refs["message"]
    assert cluster.get("deployments", "mcp-other") is None  # the deleted server itself is gone
    # Nothing emptier was published: both ConfigMaps still hold what they held.
    assert (cluster.get("configmaps", "clawplane-gateway-default") or {})["data"] == good["data"]
    assert (cluster.get("configmaps", "clawplane-agent-bot") or {})["data"] == agent_cm["data"]
    # A frozen ConfigMap that someone deletes comes back as it was.
    cluster.emu.delete_object("configmaps", NS, "clawplane-gateway-default")
    back = until(cluster.emu, "the frozen ConfigMap restored", lambda: cluster.get("configmaps", "clawplane-gateway-default"))
    assert back["data"] == good["data"]

    apply_all(cluster, server("other"))  # the reference resolves again
    cluster.ready("other")
    cluster.condition("agents", "bot", "ResolvedRefs", status="True")
    cluster.condition("gateways", "default", "ResolvedRefs", status="True")
    until(cluster.emu, "the gateway config published again", rendered)


SKILL = {
    "apiVersion": "clawplane.dev/v1alpha1",
    "kind": "Skill",
    "metadata": {"name": "house-style", "namespace": NS},
    "spec": {"description": "Apply the house style.", "body": "# House style\n\n- Use UTC.\n"},
}


def test_skills_are_published_where_the_gateway_pod_reads_them(cluster: Cluster) -> None:
    skilled = agent(["notes"])
    skilled["spec"]["skills"] = ["house-style"]
    apply_all(cluster, secret("x"), server(), SKILL, skilled, GATEWAY)
    mount = f"{cluster.op.state_dir.parent / 'skills'}/{cluster.namespace}"
    agent_cm = until(
        cluster.emu,
        "the skills prompt",
        lambda: (cm := cluster.get("configmaps", "clawplane-agent-bot")) and "house-style" in cm["data"].get("skills-prompt.txt", "") and cm,
    )
    prompt = agent_cm["data"]["skills-prompt.txt"]
    locations = re.findall(r"<location>([^<]+)</location>", prompt)
    assert locations == [f"{mount}/inline-skills/house-style/SKILL.md"]
    assert str(cluster.op.state_dir) not in json.dumps(agent_cm["data"])

    gateway = until(
        cluster.emu, "skills-volume.json", lambda: (g := cluster.get("configmaps", "clawplane-gateway-default")) and "skills-volume.json" in g["data"] and g
    )
    volume = json.loads(gateway["data"]["skills-volume.json"])
    (mounted,) = volume["volumeMounts"]
    assert mounted == {"name": "clawplane-skills", "mountPath": mount, "readOnly": True}
    (vol,) = volume["volumes"]
    skills_cm = cluster.get("configmaps", vol["configMap"]["name"])
    assert skills_cm is not None and skills_cm["metadata"]["ownerReferences"][0]["kind"] == "Gateway"
    by_path = {item["path"]: skills_cm["data"][item["key"]] for item in vol["configMap"]["items"]}
    for location in locations:  # every prompt location is a file of the mounted volume
        text = by_path[location.removeprefix(mount + "/")]
        assert text.startswith("---\n") and "# House style" in text

    # Another operator with another state dir publishes the very same ConfigMaps.
    cluster.ready("notes")
    cluster.op.stop()
    writes = cluster.child_writes()
    cluster.op = cluster.start_operator("another-state", skills_mount_path=cluster.tmp / "skills")
    cluster.op.wait_pass(0)
    cluster.ready("notes")
    assert cluster.child_writes() == writes, cluster.emu.writes("configmaps", NS)
