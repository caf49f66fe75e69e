"""The Kubernetes API emulator (tests/k8s) over real HTTP: every gap of plain kmock it closes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from tests.k8s.emulator import EmulatorThread

ROOT = Path(__file__).resolve().parents[3]
CRD_PATH = ROOT / "manifests" / "crds" / "mcpservers.clawplane.dev.yaml"
MCP = "/apis/clawplane.dev/v1alpha1/namespaces/default/mcpservers"
CM = "/api/v1/namespaces/default/configmaps"
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}
JSON = dict[str, Any]






def mcp(name: str, transport: str = "stdio", **meta: Any) -> JSON:
    """A small McpServer."""
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": name, **meta},
        "spec": {"transport": transport},
    }


def create(api: httpx.Client, path: str, obj: JSON) -> JSON:
    """POST and expect 201."""
    resp = api.post(path, json=obj)
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


def assert_status(resp: httpx.Response, code: int, reason: str) -> JSON:
    """The response is a Kubernetes Status error with this code and reason."""
    assert resp.status_code == code, resp.text
    body = dict(resp.json())
    assert body["kind"] == "Status" and body["status"] == "Failure"
    assert (body["code"], body["reason"]) == (code, reason)
    assert body["message"]
    return body


def watch_lines(api: httpx.Client, path: str, count: int, **params: str) -> list[JSON]:
    """Read ``count`` events from a bounded watch (timeoutSeconds guards a hanging test)."""
    query = {"watch": "true", "timeoutSeconds": "5", **params}
    events: list[JSON] = []
    with api.stream("GET", path, params=query) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("application/json")
        for line in resp.iter_lines():
            if line:
                events.append(json.loads(line))
            if len(events) == count:
                break
    return events


# --- metadata, versions, lists ------------------------------------------------------------------------


def test_create_fills_server_metadata(api: httpx.Client, crd: JSON) -> None:
    obj = create(api, MCP, mcp("a"))
    meta = obj["metadata"]
    assert meta["namespace"] == "default"
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert meta["generation"] == 1 and int(meta["resourceVersion"]) > int(crd["metadata"]["resourceVersion"])
    generated = create(api, MCP, {**mcp(""), "metadata": {"generateName": "gen-"}})
    assert generated["metadata"]["name"].startswith("gen-") and len(generated["metadata"]["name"]) == 9
    assert api.get(f"{MCP}/{generated['metadata']['name']}").status_code == 200


def test_resource_version_bumps_on_every_write(api: httpx.Client) -> None:
    first = create(api, CM, {"metadata": {"name": "a"}, "data": {"k": "1"}})
    rv1 = int(first["metadata"]["resourceVersion"])
    second = api.patch(f"{CM}/a", json={"data": {"k": "2"}}, headers=MERGE).json()
    assert int(second["metadata"]["resourceVersion"]) == rv1 + 1
    create(api, CM, {"metadata": {"name": "b"}})
    listing = api.get(CM).json()
    assert listing["kind"] == "ConfigMapList" and listing["apiVersion"] == "v1"
    assert listing["metadata"]["resourceVersion"] == str(rv1 + 2)
    assert [i["metadata"]["name"] for i in listing["items"]] == ["a", "b"]


def test_generation_counts_spec_changes_only(api: httpx.Client, crd: JSON) -> None:
    create(api, MCP, mcp("a"))
    labelled = api.patch(f"{MCP}/a", json={"metadata": {"labels": {"x": "y"}}}, headers=MERGE).json()
    assert labelled["metadata"]["generation"] == 1
    status = api.patch(f"{MCP}/a/status", json={"status": {"ready": True}}, headers=MERGE).json()
    assert status["metadata"]["generation"] == 1
    changed = api.patch(f"{MCP}/a", json={"spec": {"transport": "sse"}}, headers=MERGE).json()
    assert changed["metadata"]["generation"] == 2


def test_identical_patch_is_a_no_op(api: httpx.Client) -> None:
    rv = create(api, CM, {"metadata": {"name": "a"}, "data": {"k": "1"}})["metadata"]["resourceVersion"]
    same = api.patch(f"{CM}/a", json={"data": {"k": "1"}}, headers=MERGE).json()
    assert same["metadata"]["resourceVersion"] == rv


# --- patches, replace, conflicts -------------------------------------------------------------------


def test_merge_patch_null_deletes_and_strategic_merges_named_lists(api: httpx.Client) -> None:
    create(api, CM, {"metadata": {"name": "a"}, "data": {"k": "1", "gone": "x"}})
    patched = api.patch(f"{CM}/a", json={"data": {"gone": None, "new": "2"}}, headers=MERGE).json()
    assert patched["data"] == {"k": "1", "new": "2"}
    deploy = {
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "a:1", "ports": [{"containerPort": 80}]}]},
            },
        },
    }
    create(api, "/apis/apps/v1/namespaces/default/deployments", deploy)
    smp = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "a:2"}]}}}}
    resp = api.patch(
        "/apis/apps/v1/namespaces/default/deployments/web",
        json=smp,
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    container = resp.json()["spec"]["template"]["spec"]["containers"][0]
    assert (container["name"], container["image"]) == ("app", "a:2")
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]  # kept, and defaulted


def test_json_patch_test_op_guards_resource_version(api: httpx.Client) -> None:
    rv = create(api, CM, {"metadata": {"name": "a"}})["metadata"]["resourceVersion"]
    stale = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "0"},
        {"op": "add", "path": "/data", "value": {}},
    ]
    assert_status(api.patch(f"{CM}/a", json=stale, headers=JSON_PATCH), 422, "Invalid")
    fresh = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
        {"op": "add", "path": "/data", "value": {"k": "v"}},
    ]
    resp = api.patch(f"{CM}/a", json=fresh, headers=JSON_PATCH)
    assert resp.status_code == 200 and resp.json()["data"] == {"k": "v"}


def test_put_replaces_with_optimistic_concurrency(api: httpx.Client) -> None:
    old = create(api, CM, {"metadata": {"name": "a"}, "data": {"k": "1"}})
    stale = {"metadata": {"name": "a", "resourceVersion": "1"}, "data": {"k": "2"}}
    body = assert_status(api.put(f"{CM}/a", json=stale), 409, "Conflict")
    assert "the object has been modified" in body["message"]
    fresh = {
        "metadata": {"name": "a", "resourceVersion": old["metadata"]["resourceVersion"]},
        "data": {"k": "2"},
    }
    replaced = api.put(f"{CM}/a", json=fresh).json()
    assert replaced["data"] == {"k": "2"} and replaced["metadata"]["uid"] == old["metadata"]["uid"]
    unconditional = api.put(f"{CM}/a", json={"metadata": {"name": "a"}, "data": {"k": "3"}})
    assert unconditional.status_code == 200 and unconditional.json()["data"] == {"k": "3"}


def test_post_of_existing_name_is_already_exists(api: httpx.Client) -> None:
    create(api, CM, {"metadata": {"name": "a"}})
    body = assert_status(api.post(CM, json={"metadata": {"name": "a"}}), 409, "AlreadyExists")
    assert body["message"] == 'configmaps "a" already exists'


def test_missing_objects_and_kinds_answer_not_found(api: httpx.Client) -> None:
    body = assert_status(api.get(f"{CM}/nope"), 404, "NotFound")
    assert body["message"] == 'configmaps "nope" not found'
    assert_status(api.get("/apis/example.dev/v1/widgets"), 404, "NotFound")


def test_protobuf_bodies_are_unsupported(api: httpx.Client) -> None:
    resp = api.post(
        CM, content=b"k8s\x00\x0a", headers={"Content-Type": "application/vnd.kubernetes.protobuf"}
    )
    assert_status(resp, 415, "UnsupportedMediaType")


def test_server_side_apply_creates_then_merges(api: httpx.Client, crd: JSON) -> None:
    params = {"fieldManager": "test"}
    created = api.patch(f"{MCP}/a", content=yaml.safe_dump(mcp("a")), headers=APPLY, params=params)
    assert created.status_code == 201 and created.json()["metadata"]["uid"]
    update = {**mcp("a", "sse"), "metadata": {"name": "a", "labels": {"x": "y"}}}
    merged = api.patch(f"{MCP}/a", content=json.dumps(update), headers=APPLY, params=params).json()
    assert merged["spec"]["transport"] == "sse" and merged["metadata"]["labels"] == {"x": "y"}
    assert merged["metadata"]["uid"] == created.json()["metadata"]["uid"]


# --- status subresource -----------------------------------------------------------------------------


def test_status_subresource_is_isolated(api: httpx.Client, crd: JSON) -> None:
    create(api, MCP, {**mcp("a"), "status": {"ignored": "on create"}})
    assert "status" not in api.get(f"{MCP}/a").json()
    both = {"spec": {"transport": "http"}, "status": {"ready": True}}
    via_status = api.patch(f"{MCP}/a/status", json=both, headers=MERGE).json()
    assert via_status["spec"]["transport"] == "stdio" and via_status["status"] == {"ready": True}
    via_main = api.patch(
        f"{MCP}/a", json={"spec": {"transport": "sse"}, "status": {"ready": False}}, headers=MERGE
    )
    assert via_main.json()["spec"]["transport"] == "sse" and via_main.json()["status"] == {"ready": True}
    current = api.get(f"{MCP}/a").json()
    put = api.put(f"{MCP}/a/status", json={**current, "spec": {"transport": "x"}, "status": {"n": 1}}).json()
    assert put["spec"]["transport"] == "sse" and put["status"] == {"n": 1}


def test_status_of_kinds_without_the_subresource_is_plain_data(api: httpx.Client) -> None:
    create(api, CM, {"metadata": {"name": "a"}})
    assert_status(api.patch(f"{CM}/a/status", json={"data": {}}, headers=MERGE), 404, "NotFound")


# --- finalizers, deletion, GC ------------------------------------------------------------------------


def test_finalizers_hold_deletion_until_released(api: httpx.Client, emulator: EmulatorThread) -> None:
    rv = create(api, CM, {"metadata": {"name": "a", "finalizers": ["x/hold"]}})["metadata"]["resourceVersion"]
    marked = api.delete(f"{CM}/a")
    assert marked.status_code == 200 and marked.json()["metadata"]["deletionTimestamp"]
    assert api.get(f"{CM}/a").json()["metadata"]["deletionTimestamp"]
    again = api.delete(f"{CM}/a").json()
    assert again["metadata"]["resourceVersion"] == marked.json()["metadata"]["resourceVersion"]
    released = api.patch(f"{CM}/a", json={"metadata": {"finalizers": None}}, headers=MERGE)
    assert released.status_code == 200
    assert_status(api.get(f"{CM}/a"), 404, "NotFound")
    events = watch_lines(api, CM, 2, resourceVersion=rv)
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert emulator.history("configmaps", "default", "a")[-1] is None


def test_delete_without_finalizers_is_immediate(api: httpx.Client, emulator: EmulatorThread) -> None:
    create(api, CM, {"metadata": {"name": "a"}})
    assert api.delete(f"{CM}/a").status_code == 200
    assert emulator.get("configmaps", "default", "a") is None
    create(api, CM, {"metadata": {"name": "b", "labels": {"k": "v"}}})
    create(api, CM, {"metadata": {"name": "c"}})
    assert api.delete(CM, params={"labelSelector": "k=v"}).status_code == 200
    assert [o["metadata"]["name"] for o in emulator.list("configmaps", "default")] == ["c"]


def owned_configmap(name: str, *owners: JSON) -> JSON:
    """A ConfigMap whose ownerReferences name ``owners``."""
    refs = [
        {
            "apiVersion": o["apiVersion"],
            "kind": o["kind"],
            "name": o["metadata"]["name"],
            "uid": o["metadata"]["uid"],
        }
        for o in owners
    ]
    return {"metadata": {"name": name, "ownerReferences": refs}}


def test_owner_garbage_collection_by_default() -> None:
    with EmulatorThread() as emu, httpx.Client(base_url=emu.url, timeout=10) as api:
        create(
            api,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            yaml.safe_load(CRD_PATH.read_text()),
        )
        owner, other = create(api, MCP, mcp("owner")), create(api, MCP, mcp("other"))
        create(api, CM, owned_configmap("only-owner", owner))
        create(api, CM, owned_configmap("two-owners", owner, other))
        create(api, CM, {"metadata": {"name": "unowned"}})
        api.delete(f"{MCP}/owner")
        names = [o["metadata"]["name"] for o in emu.list("configmaps", "default")]
        assert names == ["two-owners", "unowned"]
        api.delete(f"{MCP}/other")
        assert [o["metadata"]["name"] for o in emu.list("configmaps", "default")] == ["unowned"]


def test_no_garbage_collection_when_disabled() -> None:
    with EmulatorThread(gc=False) as emu, httpx.Client(base_url=emu.url, timeout=10) as api:
        api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=yaml.safe_load(CRD_PATH.read_text()))
        owner = create(api, MCP, mcp("owner"))
        create(api, CM, owned_configmap("dep", owner))
        api.delete(f"{MCP}/owner")
        assert emu.get("configmaps", "default", "dep") is not None


# --- selectors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("tier=web", ["a"]),
        ("tier==web", ["a"]),
        ("tier!=web", ["b", "c"]),
        ("tier in (web,db)", ["a", "b"]),
        ("tier notin (web)", ["b", "c"]),
        ("tier", ["a", "b"]),
        ("!tier", ["c"]),
        ("tier,env=prod", ["b"]),
    ],
)
def test_label_selectors(api: httpx.Client, selector: str, expected: list[str]) -> None:
    create(api, CM, {"metadata": {"name": "a", "labels": {"tier": "web"}}})
    create(api, CM, {"metadata": {"name": "b", "labels": {"tier": "db", "env": "prod"}}})
    create(api, CM, {"metadata": {"name": "c"}})
    items = api.get(CM, params={"labelSelector": selector}).json()["items"]
    assert [i["metadata"]["name"] for i in items] == expected


def test_field_selectors(api: httpx.Client, crd: JSON) -> None:
    create(api, "/api/v1/namespaces", {"metadata": {"name": "other"}})
    create(api, MCP, mcp("a", "stdio"))
    create(api, MCP, mcp("b", "sse"))
    create(api, "/apis/clawplane.dev/v1alpha1/namespaces/other/mcpservers", mcp("c", "sse"))

    def names(selector: str) -> list[str]:
        resp = api.get("/apis/clawplane.dev/v1alpha1/mcpservers", params={"fieldSelector": selector})
        return [i["metadata"]["name"] for i in resp.json()["items"]]

    assert names("metadata.name=a") == ["a"]
    assert names("metadata.namespace=other") == ["c"]
    assert names("metadata.name!=a,metadata.namespace!=other") == ["b"]
    # Custom resources select only on metadata (and on declared selectableFields), as on a real server.
    refused = api.get("/apis/clawplane.dev/v1alpha1/mcpservers", params={"fieldSelector": "spec.transport=sse"})
    assert assert_status(refused, 400, "BadRequest")["message"] == "field label not supported: spec.transport"
    secrets = api.get("/api/v1/secrets", params={"fieldSelector": "type=Opaque"})
    assert secrets.status_code == 200, secrets.text
    assert_status(api.get(CM, params={"labelSelector": "a in (b"}), 400, "BadRequest")


# --- watches -----------------------------------------------------------------------------------------


def test_watch_resumes_from_resource_version(api: httpx.Client) -> None:
    create(api, CM, {"metadata": {"name": "a"}})
    rv = api.get(CM).json()["metadata"]["resourceVersion"]
    api.patch(f"{CM}/a", json={"data": {"k": "1"}}, headers=MERGE)
    create(api, CM, {"metadata": {"name": "b"}})
    api.delete(f"{CM}/a")
    events = watch_lines(api, CM, 3, resourceVersion=rv, allowWatchBookmarks="true")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("MODIFIED", "a"),
        ("ADDED", "b"),
        ("DELETED", "a"),
    ]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] == int(rv) + 1


def test_watch_without_version_lists_then_streams_live(api: httpx.Client, emulator: EmulatorThread) -> None:
    create(api, CM, {"metadata": {"name": "a"}})
    params = {"watch": "true", "timeoutSeconds": "5"}
    with api.stream("GET", CM, params=params) as resp:
        lines = resp.iter_lines()
        assert json.loads(next(lines))["type"] == "ADDED"
        emulator.apply_object(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "default"}}
        )
        event = json.loads(next(line for line in lines if line))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "b")


def test_watch_honours_timeout_seconds(api: httpx.Client) -> None:
    started = time.monotonic()
    resp = api.get(CM, params={"watch": "true", "timeoutSeconds": "1", "resourceVersion": "1"})
    assert resp.status_code == 200 and resp.text == ""
    assert 0.9 <= time.monotonic() - started < 5


def test_watch_from_a_compacted_version_is_gone(api: httpx.Client, emulator: EmulatorThread) -> None:
    emulator.emulator.history_limit = 2
    for name in "abc":
        create(api, CM, {"metadata": {"name": name}})
    [event] = watch_lines(api, CM, 1, resourceVersion="1")
    assert event["type"] == "ERROR" and event["object"]["code"] == 410
    assert_status(api.get(CM, params={"watch": "true", "resourceVersion": "x"}), 400, "BadRequest")


def test_watch_with_selector_sees_objects_leave(api: httpx.Client) -> None:
    rv = create(api, CM, {"metadata": {"name": "a", "labels": {"app": "x"}}})["metadata"]["resourceVersion"]
    api.patch(f"{CM}/a", json={"metadata": {"labels": {"app": None}}}, headers=MERGE)
    api.patch(f"{CM}/a", json={"metadata": {"labels": {"app": "x"}}}, headers=MERGE)
    events = watch_lines(api, CM, 2, resourceVersion=rv, labelSelector="app=x")
    assert [e["type"] for e in events] == ["DELETED", "ADDED"]


# --- dry run, namespaces, discovery, CRDs ------------------------------------------------------------


def test_dry_run_stores_nothing(api: httpx.Client, emulator: EmulatorThread) -> None:
    dry = {"dryRun": "All"}
    assert api.post(CM, json={"metadata": {"name": "a"}}, params=dry).status_code == 201
    assert emulator.get("configmaps", "default", "a") is None
    obj = create(api, CM, {"metadata": {"name": "a"}, "data": {"k": "1"}})
    preview = api.patch(f"{CM}/a", json={"data": {"k": "2"}}, headers=MERGE, params=dry).json()
    assert preview["data"] == {"k": "2"}
    assert api.delete(f"{CM}/a", params=dry).status_code == 200
    assert emulator.get("configmaps", "default", "a") == obj
    assert [verb for verb, _, _ in emulator.writes("configmaps")] == ["POST"]


def test_namespace_endpoints(api: httpx.Client) -> None:
    assert [i["metadata"]["name"] for i in api.get("/api/v1/namespaces").json()["items"]] == ["default"]
    created = create(api, "/api/v1/namespaces", {"metadata": {"name": "team-a"}})
    assert "namespace" not in created["metadata"]
    assert api.get("/api/v1/namespaces/team-a").json()["metadata"]["uid"] == created["metadata"]["uid"]
    assert (
        api.patch(
            "/api/v1/namespaces/team-a/status", json={"status": {"phase": "Active"}}, headers=MERGE
        ).status_code
        == 200
    )
    create(api, "/api/v1/namespaces/team-a/configmaps", {"metadata": {"name": "a"}})
    assert api.get("/api/v1/namespaces/team-a/configmaps/a").json()["metadata"]["namespace"] == "team-a"


BUILTINS = [
    ("/api/v1", "namespaces"),
    ("/api/v1", "configmaps"),
    ("/api/v1", "secrets"),
    ("/api/v1", "services"),
    ("/api/v1", "pods"),
    ("/api/v1", "events"),
    ("/api/v1", "serviceaccounts"),
    ("/apis/events.k8s.io/v1", "events"),
    ("/apis/apps/v1", "deployments"),
    ("/apis/apps/v1", "deployments/status"),
    ("/apis/coordination.k8s.io/v1", "leases"),
    ("/apis/apiextensions.k8s.io/v1", "customresourcedefinitions"),
]


def test_discovery_declares_the_builtins_the_operator_needs(api: httpx.Client) -> None:
    core = api.get("/api/v1").json()
    assert core["groupVersion"] == "v1"
    for group_version, name in BUILTINS:
        names = {r["name"] for r in api.get(group_version).json()["resources"]}
        assert name in names, (group_version, name)
    groups = {g["name"]: g["preferredVersion"]["version"] for g in api.get("/apis").json()["groups"]}
    assert groups["apps"] == "v1" and groups["autoscaling"] == "v2"


def test_crd_registers_and_unregisters_its_kind(api: httpx.Client, crd: JSON) -> None:
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    found = api.get("/apis/clawplane.dev/v1alpha1").json()["resources"]
    main = next(r for r in found if r["name"] == "mcpservers")
    assert main["kind"] == "McpServer" and main["namespaced"] is True
    assert set(main["shortNames"]) == {"mcp", "mcps"} and "mcpservers/status" in {r["name"] for r in found}
    assert "clawplane.dev" in {g["name"] for g in api.get("/apis").json()["groups"]}
    create(api, MCP, mcp("a"))
    assert (
        api.delete(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/mcpservers.clawplane.dev"
        ).status_code
        == 200
    )
    assert_status(api.get(MCP), 404, "NotFound")
    assert "clawplane.dev" not in {g["name"] for g in api.get("/apis").json()["groups"]}


def test_events_are_stored_in_both_groups(api: httpx.Client) -> None:
    create(api, "/api/v1/namespaces/default/events", {"metadata": {"name": "e1"}, "reason": "Test"})
    strict = {
        "metadata": {"name": "e2"},
        "reason": "Test",
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "clawplane.dev/operator",
        "reportingInstance": "test",
        "action": "Testing",
        "type": "Normal",
        "regarding": {"kind": "ConfigMap", "namespace": "default", "name": "x"},
    }
    refused = api.post("/apis/events.k8s.io/v1/namespaces/default/events", json={"metadata": {"name": "e3"}})
    assert "eventTime: Required value" in assert_status(refused, 422, "Invalid")["message"]
    create(api, "/apis/events.k8s.io/v1/namespaces/default/events", strict)
    assert len(api.get("/api/v1/events").json()["items"]) == 1
    assert len(api.get("/apis/events.k8s.io/v1/events").json()["items"]) == 1


# --- fault injection, write log -----------------------------------------------------------------------


def test_injected_conflicts_store_nothing(api: httpx.Client, crd: JSON, emulator: EmulatorThread) -> None:
    create(api, MCP, mcp("a"))
    emulator.inject_conflicts("mcpservers", 2)
    first = api.patch(f"{MCP}/a/status", json={"status": {"n": 1}}, headers=MERGE)
    assert_status(first, 409, "Conflict")
    assert_status(api.put(f"{MCP}/a", json=mcp("a", "http")), 409, "Conflict")
    assert "status" not in api.get(f"{MCP}/a").json()
    assert api.patch(f"{MCP}/a/status", json={"status": {"n": 1}}, headers=MERGE).status_code == 200
    emulator.inject_conflicts("mcpservers", 1, verbs=("DELETE",))
    assert_status(api.delete(f"{MCP}/a"), 409, "Conflict")
    assert api.delete(f"{MCP}/a").status_code == 200


def test_write_log_filters_by_resource_namespace_and_name(
    api: httpx.Client, emulator: EmulatorThread
) -> None:
    create(api, CM, {"metadata": {"name": "a"}})
    create(api, CM, {"metadata": {"name": "b"}})
    api.patch(f"{CM}/a/status", json={}, headers=MERGE)
    api.patch(f"{CM}/a", json={"data": {"k": "v"}}, headers=MERGE)
    api.get(f"{CM}/a")
    api.delete(f"{CM}/b")
    assert emulator.writes("configmaps", "default", "a") == [
        ("POST", CM, None),
        ("PATCH", f"{CM}/a/status", "status"),
        ("PATCH", f"{CM}/a", None),
    ]
    assert len(emulator.writes("configmaps")) == 5
    assert emulator.writes("configmaps", namespace="other") == []
    assert emulator.writes("secrets") == []


# --- the harness ----------------------------------------------------------------------------------


def test_harness_helpers(emulator: EmulatorThread) -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "default"},
        "data": {"k": "1"},
    }
    created = emulator.apply_object(cm)
    emulator.apply_object({**cm, "data": {"k": "2"}})
    assert emulator.get("configmaps", "default", "a") == {
        **created,
        "data": {"k": "2"},
        "metadata": {
            **created["metadata"],
            "resourceVersion": str(int(created["metadata"]["resourceVersion"]) + 1),
            "generation": 2,
        },
    }
    emulator.delete_object("configmaps", "default", "a")
    history = emulator.history("configmaps", "default", "a")
    assert [h and h["data"] for h in history] == [{"k": "1"}, {"k": "2"}, None]
    assert emulator.list("namespaces")[0]["metadata"]["name"] == "default"
    assert (
        emulator.kubeconfig is not None
        and yaml.safe_load(emulator.kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        == emulator.url
    )


def test_wait_for_is_woken_by_changes(emulator: EmulatorThread) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late", "namespace": "default"}}
    timer = threading.Timer(0.2, emulator.apply_object, args=(cm,))
    timer.start()
    try:
        found = emulator.wait_for(lambda: emulator.get("configmaps", "default", "late"), timeout=5)
    finally:
        timer.join()
    assert found["metadata"]["name"] == "late"
    with pytest.raises(TimeoutError):
        emulator.wait_for(lambda: emulator.get("configmaps", "default", "never"), timeout=0.2)


def test_shutdown_is_quick_with_open_watches_and_leaks_no_threads() -> None:
    before = set(threading.enumerate())
    with EmulatorThread(namespaces=["extra"]) as emu:
        assert [n["metadata"]["name"] for n in emu.list("namespaces")] == ["default", "extra"]
        client = httpx.Client(base_url=emu.url, timeout=10)
        stream = client.stream("GET", CM, params={"watch": "true"})
        resp = stream.__enter__()
        assert resp.status_code == 200
        started = time.monotonic()
    assert time.monotonic() - started < 5
    stream.__exit__(None, None, None)
    client.close()
    assert {t for t in threading.enumerate() if t.name == "k8s-emulator"} - before == set()


def test_command_line_entry(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "tests.k8s.emulator",
        "--port",
        "0",
        "--no-gc",
        "--print-kubeconfig",
        str(kubeconfig),
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{url}/api/v1/namespaces/default", timeout=10).status_code == 200
        assert yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"] == url
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
    assert proc.returncode == 0, stderr
