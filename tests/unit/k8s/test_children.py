"""Server Deployments/Services and output ConfigMaps: names, hashes, env, ownership."""

from __future__ import annotations

import re

import pytest
from tests.k8s.helmutil import kube_problems

from clawplane.k8s.objects.children import (
    CONFIG_HASH,
    Owner,
    UnsupportedInClusterError,
    config_map,
    dns_label,
    peers_service_name,
    server_deployment,
    server_network_policy,
    server_peers_service,
    server_service,
    service_url,
    spec_hash,
)
from clawplane.models import McpServerSpec

OWNER = Owner("McpServer", "time", "uid-1")
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def spec(**kw: object) -> McpServerSpec:
    return McpServerSpec.model_validate(
        {"transport": "stdio", "command": "uvx", "args": ["mcp-server-time"], **kw}
    )


@pytest.mark.parametrize("name", ["time", "My_Server.v2", "x" * 200, "a..b", "9lives"])
def test_child_names_are_dns_labels_and_distinct(name: str) -> None:
    label = dns_label("mcp", name)
    assert DNS_1035.match(label) and len(label) <= 63
    assert dns_label("mcp", name) == label
    assert dns_label("mcp", name + "x") != label


def test_plain_names_stay_readable() -> None:
    assert dns_label("mcp", "time") == "mcp-time"
    assert dns_label("mcp", "Time") != "mcp-time"  # two names must never share a child


def test_bridge_pods_hide_what_the_tool_filter_hides() -> None:
    filtered = spec(toolFilter={"include": ["get_*"], "exclude": ["get_secret"]})
    argv = server_deployment("time", "ns", filtered, owner=OWNER, image="img", config_hash="h")["spec"][
        "template"
    ]["spec"]["containers"][0]["command"]
    flag = argv.index("--tool-filter")
    assert argv[flag + 1] == '{"include":["get_*"],"exclude":["get_secret"]}'
    assert argv.index("--") > flag
    plain = server_deployment("time", "ns", spec(), owner=OWNER, image="img", config_hash="h")
    assert "--tool-filter" not in plain["spec"]["template"]["spec"]["containers"][0]["command"]


def test_deployment_runs_the_bridge_around_the_command() -> None:
    dep = server_deployment("time", "ns", spec(), owner=OWNER, image="img:1", config_hash="h1")
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:2] == ["clawplane", "bridge"]
    assert container["command"][-3:] == ["--", "uvx", "mcp-server-time"]
    assert container["image"] == "img:1"
    assert dep["spec"]["template"]["metadata"]["annotations"][CONFIG_HASH] == "h1"
    assert dep["metadata"]["ownerReferences"] == [OWNER.reference()]
    assert (
        dep["spec"]["selector"]["matchLabels"].items()
        <= dep["spec"]["template"]["metadata"]["labels"].items()
    )


def test_config_hash_changes_the_spec_hash_and_nothing_else_does() -> None:
    a = server_deployment("time", "ns", spec(), owner=OWNER, image="img", config_hash="h1")
    b = server_deployment("time", "ns", spec(), owner=OWNER, image="img", config_hash="h1")
    c = server_deployment("time", "ns", spec(), owner=OWNER, image="img", config_hash="h2")
    assert spec_hash(a) == spec_hash(b) != spec_hash(c)


def test_secret_refs_stay_references_and_literals_inline() -> None:
    env = {"TOKEN": {"valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}, "MODE": "fast"}
    container = server_deployment("t", "ns", spec(env=env), owner=OWNER, image="i", config_hash="h")["spec"][
        "template"
    ]["spec"]["containers"][0]
    by_name = {e["name"]: e for e in container["env"]}
    assert by_name["TOKEN"] == {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
    assert by_name["MODE"] == {"name": "MODE", "value": "fast"}


def test_operator_env_references_are_refused_with_a_fix() -> None:
    env = {"TOKEN": {"valueFrom": {"env": "TOKEN"}}}
    with pytest.raises(UnsupportedInClusterError, match="secretKeyRef"):
        server_deployment("t", "ns", spec(env=env), owner=OWNER, image="i", config_hash="h")


def test_image_and_resources_from_the_spec() -> None:
    s = spec(image="custom:2", resources={"limits": {"memory": "256Mi"}})
    container = server_deployment("t", "ns", s, owner=OWNER, image="i", config_hash="h")["spec"]["template"][
        "spec"
    ]["containers"][0]
    assert container["image"] == "custom:2"
    assert container["resources"] == {"limits": {"memory": "256Mi"}}


def test_service_selects_the_deployment_pods() -> None:
    dep = server_deployment("time", "ns", spec(), owner=OWNER, image="i", config_hash="h")
    svc = server_service("time", "ns", owner=OWNER)
    assert svc["spec"]["selector"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
    assert service_url("time", "ns") == "http://mcp-time.ns.svc:8080/mcp"


def test_config_map_hash_follows_data() -> None:
    a = config_map("cm", "ns", {"a": "1"}, owner=OWNER, labels={})
    b = config_map("cm", "ns", {"a": "2"}, owner=OWNER, labels={})
    assert spec_hash(a) != spec_hash(b)


def test_one_replica_renders_as_before_no_peers_no_affinity() -> None:
    dep = server_deployment("time", "ns", spec(), owner=OWNER, image="img", config_hash="h")
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert dep["spec"]["replicas"] == 1
    assert "--peers-dns" not in container["command"] and all(e["name"] != "POD_IP" for e in container["env"])
    assert "sessionAffinity" not in server_service("time", "ns", owner=OWNER, spec=spec())["spec"]


def test_replicas_find_each_other_through_a_headless_service_and_may_reach_each_other() -> None:
    many = spec(replicas=3)
    dep = server_deployment("time", "ns", many, owner=OWNER, image="img", config_hash="h")
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert dep["spec"]["replicas"] == 3
    command = container["command"]
    # The kubelet expands $(POD_IP) in the command from the env var the pod gets from the downward API.
    assert command[command.index("--advertise") + 1] == "$(POD_IP)"
    assert command[command.index("--peers-dns") + 1] == f"{peers_service_name('time')}.ns.svc"
    assert container["env"][0] == {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
    peers = server_peers_service("time", "ns", owner=OWNER)
    assert peers["metadata"]["name"] == peers_service_name("time") == "mcp-peers-time"
    assert peers["spec"]["clusterIP"] == "None" and "publishNotReadyAddresses" not in peers["spec"]
    assert peers["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
    # The Service spreads (no affinity): sessions are routed by id, stateless requests go anywhere.
    assert "sessionAffinity" not in server_service("time", "ns", owner=OWNER, spec=many)["spec"]
    policy = server_network_policy("time", "ns", [{"podSelector": {}}], owner=OWNER, replicas=3)
    assert {"podSelector": {"matchLabels": dep["spec"]["selector"]["matchLabels"]}} in policy["spec"]["ingress"][0]["from"]
    assert kube_problems([dep, peers, policy, server_service("time", "ns", owner=OWNER, spec=many)]) == []


def test_client_ip_affinity_is_the_fallback_and_lasts_a_session_idle_ttl() -> None:
    pinned = spec(replicas=2, sessionAffinity="ClientIP", sessionIdleTtlMs=90_500)
    service = server_service("time", "ns", owner=OWNER, spec=pinned)
    assert service["spec"]["sessionAffinity"] == "ClientIP"
    assert service["spec"]["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 91}}
    assert kube_problems([service]) == []
    with pytest.raises(ValueError, match="less than or equal to 50"):
        spec(replicas=51)
