"""The Helm chart renders, lints, enforces its values schema, and grants least privilege.

Rendering runs in-process through helm-python-sdk (no helm binary, no cluster), see
shared notes on Helm; every rendered object is validated against the Kubernetes schemas.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
from ruamel.yaml import YAML
from tests.k8s.helmutil import (
    CHART,
    HELM_HOME_VARS,
    MANIFESTS,
    RELEASE_NAMESPACE,
    Doc,
    kube_problems,
    least_privilege_problems,
    of_kind,
    one,
    render,
    render_notes,
)

import clawplane

IMAGE = f"ghcr.io/clawplane/clawplane:{clawplane.__version__}"
CLAWPLANE_RESOURCES = {"gateways", "mcpservers", "modelproviders", "agents", "channels", "skills"}

VALUE_SETS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "namespaced": {"watchNamespaces": ["team-a", "team-b"]},
    "no-rbac": {"rbac": {"create": False}, "serviceAccount": {"create": False, "name": "ops-sa"}},
    "e2e": {
        "image": {"tag": "e2e", "pullPolicy": "Never"},
        "logFormat": "text",
        "metrics": {"enabled": False},
    },
}


@pytest.fixture(autouse=True)
def helm_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep Helm away from the user's cache, config and data directories."""
    for var in HELM_HOME_VARS:
        monkeypatch.setenv(var, str(tmp_path / var.lower()))


def container(docs: list[Doc]) -> dict[str, Any]:
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    (only,) = pod["containers"]
    assert isinstance(only, dict)
    return only


def base(docs: list[Doc], kind: str) -> Doc:
    """The one object of ``kind`` that is not the admission webhook's (see the webhook test)."""
    (found,) = [d for d in of_kind(docs, kind) if not d["metadata"]["name"].endswith("-webhook")]
    return found


def arg(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_chart_versions_follow_the_package() -> None:
    meta = YAML(typ="safe").load(CHART / "Chart.yaml")
    assert meta["apiVersion"] == "v2"
    assert meta["appVersion"] == clawplane.__version__


def test_defaults_render_a_cluster_wide_operator() -> None:
    docs = render()
    assert sorted(d["kind"] for d in docs) == [
        "ClusterRole", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBinding", "Deployment",
        "PodDisruptionBudget", "Role", "Role", "RoleBinding", "RoleBinding", "Secret", "Service", "Service",
        "ServiceAccount",
    ]  # fmt: skip
    deploy = one(docs, "Deployment")
    assert deploy["metadata"]["namespace"] == RELEASE_NAMESPACE
    # Two elected replicas; a rolling update keeps the standby while the new pod starts.
    assert deploy["spec"]["replicas"] == 2
    assert deploy["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    selector = deploy["spec"]["selector"]["matchLabels"]
    pdb = one(docs, "PodDisruptionBudget")
    assert pdb["spec"] == {"minAvailable": 1, "selector": {"matchLabels": selector}}
    spread = deploy["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    (term,) = spread["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"] == {
        "topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchLabels": selector},
    }
    pod = deploy["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == one(docs, "ServiceAccount")["metadata"]["name"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 65532

    c = container(docs)
    assert c["image"] == IMAGE
    args = c["args"]
    assert args[:3] == ["k8s", "run", "--all-namespaces"] and "--namespace" not in args
    assert arg(args, "--bridge-image") == IMAGE
    assert arg(args, "--state-dir") == "/var/lib/clawplane"
    assert (arg(args, "--metrics-port"), arg(args, "--health-port")) == ("9090", "8081")
    assert (arg(args, "--resync-interval"), arg(args, "--log-format")) == ("300", "json")
    assert arg(args, "--leader-election-id") == "clawplane-operator"
    assert (arg(args, "--leader-elect-lease-duration"), arg(args, "--leader-elect-renew-deadline")) == (
        "15",
        "10",
    )
    assert arg(args, "--leader-elect-retry-period") == "2"
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    # kopf's health endpoint is on the pod's loopback only.
    assert ports == {"metrics": 9090, "webhook": 9443}
    # The kubelet probes the pod IP: the chart binds every address, explicitly, and lets only the pod
    # IP and loopback names through the Host check; /metrics needs the token of the chart's Secret.
    assert arg(args, "--metrics-bind-address") == "0.0.0.0"
    hosts = [args[i + 1] for i, a in enumerate(args) if a == "--metrics-allowed-host"]
    assert hosts == ["$(POD_IP)", "localhost", "127.0.0.1"]
    env = {e["name"]: e for e in c["env"]}
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert arg(args, "--metrics-token-file") == "/var/run/clawplane/metrics-token/token"
    token_secret = next(
        d for d in of_kind(docs, "Secret") if d["metadata"]["name"].endswith("-metrics-token")
    )
    assert len(token_secret["data"]["token"]) >= 48
    token_volume = next(v for v in pod["volumes"] if v["name"] == "metrics-token")
    assert token_volume["secret"] == {"secretName": token_secret["metadata"]["name"], "defaultMode": 0o440, "optional": True}
    # Every replica answers these (kopf's endpoint on the health port runs on the leader only).
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]

    # The state dir, /tmp and HOME (uv/npm caches) are writable emptyDirs.
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert set(mounts.values()) == {
        "/var/lib/clawplane",
        "/tmp",
        "/home/clawplane",
        "/var/run/clawplane/skills",
        "/var/run/clawplane/metrics-token",
    }
    assert all(
        "emptyDir" in v for v in pod["volumes"] if v["name"] in mounts and v["name"] != "metrics-token"
    )

    svc = base(docs, "Service")
    assert svc["spec"]["ports"] == [
        {"name": "metrics", "port": 9090, "targetPort": "metrics", "protocol": "TCP"}
    ]
    assert svc["spec"]["selector"] == deploy["spec"]["selector"]["matchLabels"]

    # The Lease: get/create/update in the release namespace only.
    lease_role = base(docs, "Role")
    assert lease_role["metadata"]["namespace"] == RELEASE_NAMESPACE
    assert lease_role["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]}
    ]
    lease_binding = base(docs, "RoleBinding")
    assert lease_binding["roleRef"]["name"] == lease_role["metadata"]["name"]
    assert lease_binding["subjects"] == [
        {"kind": "ServiceAccount", "name": pod["serviceAccountName"], "namespace": RELEASE_NAMESPACE}
    ]

    binding = base(docs, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == base(docs, "ClusterRole")["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": pod["serviceAccountName"], "namespace": RELEASE_NAMESPACE}
    ]


def test_watch_namespaces_get_a_role_each_and_no_cluster_wide_access() -> None:
    docs = render(VALUE_SETS["namespaced"])
    args = container(docs)["args"]
    assert "--all-namespaces" not in args
    assert [args[i + 1] for i, a in enumerate(args) if a == "--namespace"] == ["team-a", "team-b"]

    others = ("-leader-election", "-webhook")
    roles = {
        r["metadata"]["namespace"]: r for r in of_kind(docs, "Role") if not r["metadata"]["name"].endswith(others)
    }
    bindings = {
        b["metadata"]["namespace"]: b
        for b in of_kind(docs, "RoleBinding")
        if not b["metadata"]["name"].endswith(others)
    }
    assert set(roles) == set(bindings) == {"team-a", "team-b"}
    sa = one(docs, "ServiceAccount")["metadata"]["name"]
    for ns, role in roles.items():
        assert any(set(r["resources"]) == CLAWPLANE_RESOURCES for r in role["rules"])
        assert bindings[ns]["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role["metadata"]["name"],
        }  # fmt: skip
        assert bindings[ns]["subjects"] == [
            {"kind": "ServiceAccount", "name": sa, "namespace": RELEASE_NAMESPACE}
        ]

    # The only cluster-wide grant left is what kopf and sharding list and watch: namespaces and CRDs.
    cluster_rules = base(docs, "ClusterRole")["rules"]
    assert {res for rule in cluster_rules for res in rule["resources"]} == {
        "namespaces", "customresourcedefinitions",
    }  # fmt: skip
    assert all(set(rule["verbs"]) == {"list", "watch"} for rule in cluster_rules)


def test_rbac_and_service_account_can_be_left_to_the_user() -> None:
    docs = render(VALUE_SETS["no-rbac"])
    assert sorted(d["kind"] for d in docs) == ["Deployment", "PodDisruptionBudget", "Secret", "Service", "Service"]
    assert one(docs, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == "ops-sa"
    docs = render({"serviceAccount": {"create": False}})
    assert one(docs, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == "default"
    assert "rbac.create is false" in render_notes(VALUE_SETS["no-rbac"])


def test_image_overrides_reach_the_operator_and_the_bridge() -> None:
    docs = render(VALUE_SETS["e2e"])
    c = container(docs)
    assert c["image"] == "ghcr.io/clawplane/clawplane:e2e" and c["imagePullPolicy"] == "Never"
    assert arg(c["args"], "--bridge-image") == "ghcr.io/clawplane/clawplane:e2e"
    assert arg(c["args"], "--log-format") == "text"
    assert [s["metadata"]["name"] for s in of_kind(docs, "Service")] == ["clawplane-webhook"]  # no metrics

    c = container(render({"bridgeImage": "registry.example/bridge:1", "metrics": {"port": 9100}}))
    assert arg(c["args"], "--bridge-image") == "registry.example/bridge:1"
    assert arg(c["args"], "--metrics-port") == "9100"


def test_one_unelected_replica_and_no_budget() -> None:
    single = {"replicaCount": 1, "leaderElection": {"enabled": False}}
    docs = render(single)
    deploy = one(docs, "Deployment")
    assert deploy["spec"]["replicas"] == 1 and deploy["spec"]["strategy"] == {"type": "Recreate"}
    assert "--no-leader-elect" in container(docs)["args"]
    assert of_kind(docs, "PodDisruptionBudget") == []
    assert [r["metadata"]["name"] for r in of_kind(docs, "Role")] == ["clawplane-webhook"]
    with pytest.raises(helm.HelmRenderError, match=r"replicaCount > 1 needs leaderElection\.enabled"):
        render({**single, "replicaCount": 2})
    hard = one(render({"podAntiAffinity": "hard"}), "Deployment")["spec"]["template"]["spec"]["affinity"]
    assert hard["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == (
        "kubernetes.io/hostname"
    )
    mine = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}
    assert one(render({"affinity": mine}), "Deployment")["spec"]["template"]["spec"]["affinity"] == mine


def test_notes_say_what_is_watched() -> None:
    assert "every namespace" in render_notes()
    assert "team-a, team-b" in render_notes(VALUE_SETS["namespaced"])


def test_notes_say_how_a_gateway_pod_reads_its_config_and_skills() -> None:
    notes = render_notes({"skillsMountPath": "/mnt/skills"})
    assert "ConfigMap clawplane-gateway-<gateway>" in notes and "secret-env.json" in notes
    assert "skills-volume.json" in notes and "/mnt/skills/<namespace>" in notes
    assert "networkPolicy.gatewayPodSelector" in notes
    assert "gatewayPodSelector" not in render_notes({"networkPolicy": {"enabled": False}})


@pytest.mark.parametrize("values", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_strict_lint_is_clean(values: dict[str, Any]) -> None:
    result = helm.lint(CHART, values, strict=True)
    serious = [m for m in result["messages"] if m["severity"] >= 2]
    assert serious == [] and result["errors"] == [], result


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"replicaCount": -1}, "/replicaCount"),
        ({"leaderElection": {"enabled": True, "leaseName": "x", "leaseDuration": 1.5}}, "/leaderElection"),
        ({"podAntiAffinity": "always"}, "/podAntiAffinity"),
        ({"logFormat": "xml"}, "/logFormat"),
        ({"surprise": True}, "surprise"),
        ({"image": {"pullPolicy": "Sometimes"}}, "/image/pullPolicy"),
        ({"watchNamespaces": ["Not A Namespace"]}, "/watchNamespaces/0"),
        ({"rbac": {"create": True, "extra": 1}}, "/rbac"),
    ],
    ids=[
        "replicas",
        "lease-duration",
        "anti-affinity",
        "log-format",
        "unknown-key",
        "pull-policy",
        "namespace-name",
        "nested-unknown",
    ],
)
def test_values_schema_rejects_bad_values(values: dict[str, Any], field: str) -> None:
    with pytest.raises(helm.HelmValuesError) as info:
        render(values)
    assert field in str(info.value)
    lint = helm.lint(CHART, values, strict=True)
    assert any(m["severity"] == 3 and field in m["error"] for m in lint["messages"]), lint


@pytest.mark.parametrize("values", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_rendered_objects_pass_the_kubernetes_schemas(values: dict[str, Any]) -> None:
    assert kube_problems(render(values)) == []


@pytest.mark.parametrize("values", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_rbac_is_least_privilege(values: dict[str, Any]) -> None:
    docs = render(values)
    assert least_privilege_problems(docs) == []
    secrets = [
        r
        for d in docs
        if d["kind"] in ("Role", "ClusterRole")
        for r in d["rules"]
        if "secrets" in r["resources"]
    ]
    # Read for secretKeyRef values; written only for the bridge tokens (no deletecollection, no
    # patch: the operator replaces what drifted). What each verb is for: test_operator_rbac.py.
    assert all(r["resources"] == ["secrets"] for r in secrets)
    webhook = [r for r in secrets if "resourceNames" in r or r["verbs"] == ["create"]]
    assert all(
        sorted(r["verbs"]) == ["create", "delete", "get", "list", "update", "watch"]
        for r in secrets
        if r not in webhook
    )
    # The webhook's certificate: create (no name exists yet), then get/update of its Secret alone.
    if webhook:
        assert webhook == [
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
            {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["clawplane-webhook-tls"], "verbs": ["get", "update"]},
        ]


def test_the_webhook_is_served_behind_a_service_with_its_own_rights() -> None:
    docs = render({"webhook": {"failurePolicy": "Fail", "timeoutSeconds": 10, "port": 8443}})
    args = container(docs)["args"]
    assert arg(args, "--webhook-port") == "8443" and arg(args, "--webhook-bind-address") == "0.0.0.0"
    assert arg(args, "--webhook-service") == "clawplane-webhook"
    assert arg(args, "--webhook-configuration") == "clawplane"
    assert arg(args, "--webhook-secret") == "clawplane-webhook-tls"
    assert (arg(args, "--webhook-failure-policy"), arg(args, "--webhook-timeout")) == ("Fail", "10")
    svc = next(s for s in of_kind(docs, "Service") if s["metadata"]["name"] == "clawplane-webhook")
    assert svc["spec"]["ports"] == [{"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}]
    assert svc["spec"]["selector"] == one(docs, "Deployment")["spec"]["selector"]["matchLabels"]
    role = next(r for r in of_kind(docs, "ClusterRole") if r["metadata"]["name"] == "clawplane-webhook")
    assert role["rules"] == [
        {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["validatingwebhookconfigurations"], "verbs": ["create"]},
        {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["validatingwebhookconfigurations"],
         "resourceNames": ["clawplane"], "verbs": ["get", "update"]},
    ]  # fmt: skip
    # The chart's arguments are the operator's: its own command line reads them.
    import typer.main

    from clawplane.cli.app import build_app
    from clawplane.k8s.options import WebhookArgs, webhook_options

    assert args[:2] == ["k8s", "run"]
    run = typer.main.get_command(build_app("k8s")).commands["k8s"].commands["run"]  # type: ignore[attr-defined]
    given = run.make_context("run", args[2:]).params
    settings = webhook_options(
        WebhookArgs(
            given["webhook_port"], given["webhook_bind_address"], given["webhook_service"], given["webhook_url"],
            given["webhook_service_port"], given["webhook_configuration"], given["webhook_secret"],
            given["webhook_failure_policy"].value, given["webhook_timeout"],
        )
    )  # fmt: skip
    assert settings is not None and settings.target.service == "clawplane-webhook"
    off = render({"webhook": {"enabled": False, "port": 9443, "failurePolicy": "Ignore", "timeoutSeconds": 5}})
    assert "--webhook-port" not in container(off)["args"]
    assert not [d for d in off if d["metadata"]["name"].endswith("-webhook")]


def test_chart_crds_are_the_generated_crds() -> None:
    """`clawplane schema` writes the same bytes to manifests/crds/ and the chart's crds/."""
    with helm.Chart.load(CHART) as chart:
        crds = {Path(c["name"]).name: c["data"] for c in chart.crds}
    expected = {p.name: p.read_text(encoding="utf-8") for p in sorted((MANIFESTS / "crds").glob("*.yaml"))}
    assert len(expected) == 6 and crds == expected
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in sorted((CHART / "crds").glob("*"))}
    assert on_disk == expected


def test_network_policy_peers_reach_the_operator() -> None:
    """The chart hands the gateway selector and its own pods to the operator; off writes none."""
    args = one(render(), "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    peers = json.loads(args[args.index("--bridge-ingress-from") + 1])
    assert peers[0] == {
        "podSelector": {"matchExpressions": [{"key": "clawplane.dev/gateway", "operator": "Exists"}]}
    }
    operator_pods = one(render(), "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert all(operator_pods[k] == v for k, v in peers[1]["podSelector"]["matchLabels"].items())
    assert peers[1]["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "clawplane-system"}
    custom = {"networkPolicy": {"enabled": True, "gatewayPodSelector": {"matchLabels": {"app": "openclaw"}}}}
    args = one(render(custom), "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert json.loads(args[args.index("--bridge-ingress-from") + 1])[0] == {
        "podSelector": {"matchLabels": {"app": "openclaw"}}
    }
    off = {"networkPolicy": {"enabled": False, "gatewayPodSelector": {"matchLabels": {"app": "openclaw"}}}}
    args = one(render(off), "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--bridge-ingress-from") + 1] == "none"


def test_metrics_token_from_an_existing_secret_and_a_loopback_bind() -> None:
    docs = render(
        {"metrics": {"bindAddress": "127.0.0.1", "tokenSecret": {"existingSecret": "scrape", "key": "t"}}}
    )
    assert [d for d in of_kind(docs, "Secret") if d["metadata"]["name"].endswith("-metrics-token")] == []
    c = container(docs)
    assert arg(c["args"], "--metrics-bind-address") == "127.0.0.1"
    assert arg(c["args"], "--metrics-token-file") == "/var/run/clawplane/metrics-token/t"
    assert "--metrics-allowed-host" not in c["args"]  # loopback: only loopback names pass anyway
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert next(v for v in pod["volumes"] if v["name"] == "metrics-token")["secret"]["secretName"] == "scrape"
    extra = container(render({"metrics": {"allowedHosts": ["clawplane-metrics.ops.svc"]}}))["args"]
    hosts = [extra[i + 1] for i, a in enumerate(extra) if a == "--metrics-allowed-host"]
    assert hosts == ["$(POD_IP)", "localhost", "127.0.0.1", "clawplane-metrics.ops.svc"]


def test_a_shard_reconciles_the_namespaces_its_selector_chooses() -> None:
    values = {"namespaceSelector": "clawplane.dev/shard=a", "leaderElection": {"leaseName": "clawplane-shard-a"}}
    docs = render(values)
    args = container(docs)["args"]
    assert args[:3] == ["k8s", "run", "--all-namespaces"]
    assert arg(args, "--namespace-selector") == "clawplane.dev/shard=a"
    assert arg(args, "--leader-election-id") == "clawplane-shard-a"
    assert base(docs, "ClusterRole")  # it lists namespaces and reconciles any that match
    assert "--namespace-selector" not in container(render())["args"]
    with pytest.raises(helm.HelmRenderError, match="leave watchNamespaces empty"):
        render({"namespaceSelector": "shard=a", "watchNamespaces": ["team-a"]})
