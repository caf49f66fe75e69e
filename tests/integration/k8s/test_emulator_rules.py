"""The emulator refuses what a real kube-apiserver refuses (rules ported in tests/k8s/rules), over HTTP.

Each test pins the status code, reason and the upstream wording of one write rule:
CRD structure, custom-resource pruning/defaulting/validation and field validation,
built-in validation and defaults, patch content types, resourceVersion rules,
NamespaceLifecycle and immutable fields, printer-column Tables and OpenAPI v3 discovery.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx
import yaml
from tests.k8s.emulator import EmulatorThread

ROOT = Path(__file__).resolve().parents[3]
CRD_PATH = ROOT / "manifests" / "crds" / "mcpservers.clawplane.dev.yaml"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MCP = "/apis/clawplane.dev/v1alpha1/namespaces/default/mcpservers"
CM = "/api/v1/namespaces/default/configmaps"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
MERGE = {"Content-Type": "application/merge-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
JSON = dict[str, Any]






def status(resp: httpx.Response, code: int, reason: str) -> JSON:
    assert resp.status_code == code, resp.text
    body = dict(resp.json())
    assert (body["kind"], body["code"], body["reason"]) == ("Status", code, reason)
    return body


def server(name: str = "a", **spec: Any) -> JSON:
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": name},
        "spec": {"transport": "stdio", "command": "python3", **spec},
    }


def deployment(name: str = "web", labels: JSON | None = None, **container: Any) -> JSON:
    labels = labels or {"app": name}
    return {
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "img:1", **container}]},
            },
        },
    }


# --- CRDs ------------------------------------------------------------------------------------------


def test_a_crd_with_preserved_root_metadata_is_refused(api: httpx.Client) -> None:
    crd = yaml.safe_load(CRD_PATH.read_text())
    root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    root["properties"]["metadata"]["x-kubernetes-preserve-unknown-fields"] = True
    body = status(api.post(CRDS, json=crd), 422, "Invalid")
    assert body["message"] == (
        'CustomResourceDefinition.apiextensions.k8s.io "mcpservers.clawplane.dev" is invalid: '
        "spec.versions[0].schema.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything "
        "other than name and generateName, but metadata is implicitly specified"
    )
    assert api.get("/apis/clawplane.dev/v1alpha1/mcpservers").status_code == 404  # nothing registered


def test_unknown_schema_keywords_follow_field_validation(api: httpx.Client) -> None:
    crd = yaml.safe_load(CRD_PATH.read_text())
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["const"] = 1
    refused = api.post(CRDS, json=crd, params={"fieldValidation": "Strict"})
    assert 'unknown field "spec.versions[0].schema.openAPIV3Schema.properties.spec.const"' in status(
        refused, 400, "BadRequest"
    )["message"]
    warned = api.post(CRDS, json=crd)
    assert warned.status_code == 201 and "unknown field" in warned.headers["Warning"]


def test_cel_rules_are_stored_not_evaluated(api: httpx.Client) -> None:
    crd = yaml.safe_load(CRD_PATH.read_text())
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] = [
        {"rule": "has(self.command)"}
    ]
    stored = api.post(CRDS, json=crd)
    assert stored.status_code == 201, stored.text
    spec = stored.json()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["x-kubernetes-validations"] == [{"rule": "has(self.command)"}]
    # Not evaluated: an object the rule refuses is stored (the real server's tests check the rules).
    made = api.post(MCP, json={**server(), "spec": {"transport": "sse", "url": "http://x.example.test/sse"}})
    assert made.status_code == 201, made.text


# --- custom resources ------------------------------------------------------------------------------


def test_custom_resources_are_validated_against_their_schema(api: httpx.Client, crd: JSON) -> None:
    bad = server(transport="http", connectionTimeoutMs=0, args="not-a-list")
    body = status(api.post(MCP, json=bad), 422, "Invalid")
    assert body["message"].startswith('McpServer.clawplane.dev "a" is invalid: [')
    fields = {c["field"]: c["message"] for c in body["details"]["causes"]}
    assert fields["spec.transport"] == 'Unsupported value: "http": supported values: "stdio", "sse", "streamable-http"'
    assert fields["spec.connectionTimeoutMs"] == "Invalid value: 0: spec.connectionTimeoutMs in body should be greater than 0"
    assert fields["spec.args"] == 'Invalid value: "not-a-list": spec.args in body must be of type array: "string"'


def test_unknown_fields_are_pruned_warned_or_refused(api: httpx.Client, crd: JSON) -> None:
    typo = server(comand="python3")
    refused = api.post(MCP, json=typo, params={"fieldValidation": "Strict"})
    assert status(refused, 400, "BadRequest")["message"] == (
        'McpServer in version "v1alpha1" cannot be handled as a McpServer: strict decoding error: '
        'unknown field "spec.comand"'
    )
    warned = api.post(MCP, json={**typo, "extra": 1})
    assert warned.status_code == 201
    assert warned.headers["Warning"] == '299 - "unknown field \\"extra\\"", 299 - "unknown field \\"spec.comand\\""'
    stored = warned.json()
    assert "comand" not in stored["spec"] and "extra" not in stored
    status(api.post(MCP, json=server("b"), params={"fieldValidation": "Sometimes"}), 400, "BadRequest")


def test_status_is_validated_against_the_status_schema_only(api: httpx.Client, crd: JSON) -> None:
    api.post(MCP, json=server())
    ok = api.patch(f"{MCP}/a/status", json={"status": {"anything": {"goes": True}}}, headers=MERGE)
    assert ok.status_code == 200 and ok.json()["status"] == {"anything": {"goes": True}}


def test_custom_resources_refuse_strategic_merge_patches(api: httpx.Client, crd: JSON) -> None:
    api.post(MCP, json=server())
    body = status(api.patch(f"{MCP}/a", json={"spec": {"command": "x"}}, headers=STRATEGIC), 415, "UnsupportedMediaType")
    assert "application/merge-patch+json" in body["message"] and "strategic" not in body["message"]
    status(api.patch(f"{MCP}/a", json={"spec": {}}, headers={"Content-Type": "application/json"}), 415, "UnsupportedMediaType")


def test_custom_resource_updates_need_a_resource_version(api: httpx.Client, crd: JSON) -> None:
    created = api.post(MCP, json=server()).json()
    unconditional = copy.deepcopy(created)
    del unconditional["metadata"]["resourceVersion"]
    body = status(api.put(f"{MCP}/a", json=unconditional), 422, "Invalid")
    assert body["message"] == (
        'McpServer.clawplane.dev "a" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update'
    )
    stale = {**created, "metadata": {**created["metadata"], "resourceVersion": "1"}}
    status(api.put(f"{MCP}/a", json=stale), 409, "Conflict")
    assert api.put(f"{MCP}/a", json=created).status_code == 200


def test_creating_with_a_resource_version_is_an_error(api: httpx.Client) -> None:
    body = status(api.post(CM, json={"metadata": {"name": "c", "resourceVersion": "7"}}), 500, "InternalError")
    assert body["message"] == "resourceVersion should not be set on objects to be created"


def test_printer_columns_come_back_as_a_table(api: httpx.Client, crd: JSON) -> None:
    api.post(MCP, json=server())
    api.patch(
        f"{MCP}/a/status",
        json={"status": {"toolCount": 3, "conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}]}},
        headers=MERGE,
    )
    table = api.get(MCP, headers=TABLE).json()
    assert table["kind"] == "Table"
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == ["Name", "Transport", "Tools", "Ready", "Reason", "Age"]
    (row,) = table["rows"]
    assert row["cells"][:5] == ["a", "stdio", 3, "True", "Ready"]
    assert row["cells"][5].endswith("s") and row["object"]["kind"] == "PartialObjectMetadata"
    plain = api.get(MCP).json()
    assert plain["kind"] == "McpServerList"


# --- built-in kinds ---------------------------------------------------------------------------------


def test_deployments_are_validated_and_defaulted(api: httpx.Client) -> None:
    bad = deployment(
        env=[{"name": "A=B", "value": "1"}, {"name": "S", "valueFrom": {"secretKeyRef": {"key": "k"}}}],
        resources={"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi", "bogus": "1"}},
        volumeMounts=[{"name": "tmp", "mountPath": "/tmp"}],
    )
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    body = status(api.post(DEPLOY, json=bad), 422, "Invalid")
    causes = {c["field"]: c["message"] for c in body["details"]["causes"]}
    container = "spec.template.spec.containers[0]"
    assert causes["spec.template.metadata.labels"] == 'Invalid value: {"app":"other"}: `selector` does not match template `labels`'
    assert causes[f"{container}.env[0].name"].startswith('Invalid value: "A=B": a valid environment variable name')
    assert causes[f"{container}.env[1].valueFrom.secretKeyRef.name"] == "Required value"
    assert causes[f"{container}.resources.limits[bogus]"].endswith("must be a standard resource type or fully qualified")
    assert causes[f"{container}.volumeMounts[0].name"] == 'Not found: "tmp"'

    good = api.post(DEPLOY, json=deployment(resources={"limits": {"cpu": "0.5", "memory": "1024Mi"}}))
    assert good.status_code == 201, good.text
    spec = good.json()["spec"]
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
    pod = spec["template"]["spec"]
    assert (pod["restartPolicy"], pod["dnsPolicy"], pod["terminationGracePeriodSeconds"]) == ("Always", "ClusterFirst", 30)
    c = pod["containers"][0]
    assert c["imagePullPolicy"] == "IfNotPresent" and c["terminationMessagePath"] == "/dev/termination-log"
    assert c["resources"]["limits"] == {"cpu": "500m", "memory": "1Gi"}  # stored canonicalized


def test_a_deployment_selector_is_immutable(api: httpx.Client) -> None:
    api.post(DEPLOY, json=deployment())
    moved = deployment(labels={"app": "web", "tier": "x"})
    body = status(api.put(f"{DEPLOY}/web", json=moved), 422, "Invalid")
    assert "spec.selector: Invalid value: " in body["message"] and body["message"].endswith("field is immutable")


def test_unknown_fields_of_builtins_follow_field_validation(api: httpx.Client) -> None:
    typo = deployment(imagee="x")
    refused = api.post(DEPLOY, json=typo, params={"fieldValidation": "Strict"})
    assert status(refused, 400, "BadRequest")["message"].endswith(
        'strict decoding error: unknown field "spec.template.spec.containers[0].imagee"'
    )
    wrong_type = deployment()
    wrong_type["spec"]["replicas"] = "two"
    assert "cannot unmarshal string" in status(api.post(DEPLOY, json=wrong_type), 400, "BadRequest")["message"]


def test_services_get_a_cluster_ip_that_never_changes(api: httpx.Client) -> None:
    svc = {"metadata": {"name": "s"}, "spec": {"selector": {"a": "b"}, "ports": [{"port": 80, "targetPort": "http"}]}}
    created = api.post("/api/v1/namespaces/default/services", json=svc).json()
    ip = created["spec"]["clusterIP"]
    assert ip and created["spec"]["ports"][0]["protocol"] == "TCP" and created["spec"]["type"] == "ClusterIP"
    kept = api.put("/api/v1/namespaces/default/services/s", json=svc).json()  # the client left it empty
    assert kept["spec"]["clusterIP"] == ip
    moved = {**svc, "spec": {**svc["spec"], "clusterIP": "10.0.0.9"}}
    status(api.put("/api/v1/namespaces/default/services/s", json=moved), 422, "Invalid")
    unnamed = {"metadata": {"name": "t"}, "spec": {"ports": [{"port": 80}, {"port": 81}]}}
    assert "spec.ports[0].name: Required value" in status(
        api.post("/api/v1/namespaces/default/services", json=unnamed), 422, "Invalid"
    )["message"]


def test_secret_string_data_is_folded_into_data(api: httpx.Client) -> None:
    created = api.post("/api/v1/namespaces/default/secrets", json={"metadata": {"name": "s"}, "stringData": {"k": "v"}})
    body = created.json()
    assert body["data"] == {"k": "dg=="} and "stringData" not in body and body["type"] == "Opaque"


def test_config_map_keys_and_size(api: httpx.Client) -> None:
    status(api.post(CM, json={"metadata": {"name": "c"}, "data": {"a/b": "x"}}), 422, "Invalid")
    big = {"metadata": {"name": "big"}, "data": {"a": "x" * (1024 * 1024 + 1)}}
    assert "must have at most 1048576 bytes" in status(api.post(CM, json=big), 422, "Invalid")["message"]
    frozen = api.post(CM, json={"metadata": {"name": "f"}, "data": {"a": "1"}, "immutable": True}).json()
    frozen["data"] = {"a": "2"}
    status(api.put(f"{CM}/f", json=frozen), 422, "Invalid")


def test_labels_annotations_and_owner_references_are_checked(api: httpx.Client) -> None:
    bad = {
        "metadata": {
            "name": "c",
            "labels": {"bad key!": "v"},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": True},
                {"apiVersion": "v1", "kind": "B", "name": "b", "uid": "2", "controller": True},
            ],
        }
    }
    body = status(api.post(CM, json=bad), 422, "Invalid")
    assert "metadata.labels: Invalid value: \"bad key!\"" in body["message"]
    assert "Only one reference can have Controller set to true" in body["message"]
    status(api.post(CM, json={"metadata": {"name": "Upper_Case"}}), 422, "Invalid")


# --- NamespaceLifecycle ---------------------------------------------------------------------------


def test_creating_in_a_missing_namespace_is_not_found(api: httpx.Client) -> None:
    body = status(api.post("/api/v1/namespaces/nope/configmaps", json={"metadata": {"name": "c"}}), 404, "NotFound")
    assert body["message"] == 'namespaces "nope" not found'


def test_a_deleted_namespace_terminates_and_takes_its_contents(api: httpx.Client, emulator: EmulatorThread) -> None:
    api.post("/api/v1/namespaces", json={"metadata": {"name": "team"}})
    held = {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    api.post("/api/v1/namespaces/team/configmaps", json=held)
    api.post("/api/v1/namespaces/team/configmaps", json={"metadata": {"name": "plain"}})
    api.delete("/api/v1/namespaces/team")
    ns = emulator.wait_for(lambda: (n := emulator.get("namespaces", None, "team")) and n["status"]["phase"] == "Terminating" and n)
    assert ns["spec"]["finalizers"] == ["kubernetes"]
    emulator.wait_for(lambda: emulator.get("configmaps", "team", "plain") is None)
    refused = api.post("/api/v1/namespaces/team/configmaps", json={"metadata": {"name": "late"}})
    assert "because it is being terminated" in status(refused, 403, "Forbidden")["message"]
    api.patch("/api/v1/namespaces/team/configmaps/held", json={"metadata": {"finalizers": []}}, headers=MERGE)
    emulator.wait_for(lambda: emulator.get("namespaces", None, "team") is None)
    status(api.delete("/api/v1/namespaces/default"), 403, "Forbidden")


# --- OpenAPI v3 (kubectl --validate=strict) -------------------------------------------------------


def test_openapi_v3_declares_field_validation_for_every_kind(api: httpx.Client, crd: JSON) -> None:
    root = api.get("/openapi/v3").json()["paths"]
    assert {"api/v1", "apis/apps/v1", "apis/clawplane.dev/v1alpha1"} <= set(root)
    doc = api.get(root["apis/clawplane.dev/v1alpha1"]["serverRelativeURL"]).json()
    patch = doc["paths"]["/apis/clawplane.dev/v1alpha1/namespaces/{namespace}/mcpservers/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "clawplane.dev", "version": "v1alpha1", "kind": "McpServer"}
    assert {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}} in patch["parameters"]


LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def lease(holder: str, duration: int = 15, **spec: Any) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "leader"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration, "leaseTransitions": 0, **spec},
    }


def test_leases_are_validated_and_guarded_by_their_resource_version(api: httpx.Client) -> None:
    body = status(api.post(LEASES, json=lease("a", 0)), 422, "Invalid")
    assert "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0" in body["message"]
    body = status(api.post(LEASES, json=lease("a", leaseTransitions=-1)), 422, "Invalid")
    assert "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0" in body["message"]
    body = status(api.post(LEASES, json=lease("a", preferredHolder="b")), 422, "Invalid")
    assert "spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined" in body["message"]
    created = api.post(LEASES, json=lease("a"))
    assert created.status_code == 201, created.text
    status(api.post(LEASES, json=lease("b")), 409, "AlreadyExists")  # two candidates create: one wins
    # Two candidates take over from the same version: the second write is a conflict.
    first, second = copy.deepcopy(created.json()), copy.deepcopy(created.json())
    first["spec"]["holderIdentity"], second["spec"]["holderIdentity"] = "b", "c"
    assert api.put(f"{LEASES}/leader", json=first).status_code == 200
    status(api.put(f"{LEASES}/leader", json=second), 409, "Conflict")
    assert api.get(f"{LEASES}/leader").json()["spec"]["holderIdentity"] == "b"


def test_pod_disruption_budgets_are_validated(api: httpx.Client) -> None:
    path = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
    selector = {"matchLabels": {"app": "op"}}

    def pdb(**spec: Any) -> JSON:
        return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "op"}, "spec": spec}

    body = status(api.post(path, json=pdb(minAvailable=1, maxUnavailable=1, selector=selector)), 422, "Invalid")
    assert "minAvailable and maxUnavailable cannot be both set" in body["message"]
    body = status(api.post(path, json=pdb(minAvailable="150%", selector=selector)), 422, "Invalid")
    assert 'spec.minAvailable: Invalid value: "150%": must not be greater than 100%' in body["message"]
    body = status(api.post(path, json=pdb(maxUnavailable=-1, selector=selector)), 422, "Invalid")
    assert "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0" in body["message"]
    assert api.post(path, json=pdb(minAvailable=1, selector=selector)).status_code == 201
