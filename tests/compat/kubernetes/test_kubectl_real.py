"""Real kubectl against a real kube-apiserver: what users run, with the API server's own rules.

Every example is applied client-side and server-side; ``kubectl explain`` reads the CRDs'
descriptions from the server's OpenAPI; ``diff`` and ``--dry-run=server`` store nothing;
``kubectl get`` prints the CRDs' printer columns; two field managers get the real conflict.
"""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import ApiError, Kube
from tests.oracles.runners import OracleRunner

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "k8s"
JSON = dict[str, Any]
API = "clawplane.dev/v1alpha1"
pytestmark = pytest.mark.compat


def _dump(docs: list[JSON]) -> str:
    out = io.StringIO()
    YAML(typ="safe", pure=True).dump_all(docs, out)
    return out.getvalue()


def examples_in(namespace: str) -> list[JSON]:
    """Every example object (not the Namespace), moved into ``namespace``."""
    docs: list[JSON] = []
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        for doc in YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")):
            if doc and doc["kind"] != "Namespace":
                doc["metadata"]["namespace"] = namespace
                docs.append(doc)
    return docs


def server(name: str, url: str = "http://notes.example.test/mcp") -> JSON:
    """A small remote McpServer."""
    return {"apiVersion": API, "kind": "McpServer", "metadata": {"name": name},
            "spec": {"transport": "streamable-http", "url": url}}  # fmt: skip


def test_every_crd_is_structural_and_established(admin: Kube) -> None:
    for crd in admin.list("apiextensions.k8s.io/v1", "CustomResourceDefinition"):
        if crd["spec"]["group"] != "clawplane.dev":
            continue
        conditions = {c["type"]: c for c in crd["status"]["conditions"]}
        assert "NonStructuralSchema" not in conditions, conditions
        assert conditions["Established"]["status"] == "True", conditions


def test_every_example_applies_client_side_then_server_side(
    kubectl_real: OracleRunner, namespace: str
) -> None:
    docs = examples_in(namespace)
    text = _dump(docs)
    created = kubectl_real.run("apply", "-f", "-", input=text, check=True).stdout
    for doc in docs:
        assert f"/{doc['metadata']['name']} created" in created, created
    again = kubectl_real.run("apply", "-f", "-", input=text, check=True).stdout
    # A Secret written with stringData is always "configured" again by client-side apply (the
    # server stores data, never stringData); every clawplane object is unchanged.
    ours = [d for d in docs if d["apiVersion"] == API]
    assert all(f"/{d['metadata']['name']} unchanged" in again for d in ours), again
    # Taking the objects over from kubectl's client-side apply, as the docs' upgrade path says.
    taken = kubectl_real.run(
        "apply", "--server-side", "--force-conflicts", "-f", "-", input=text, check=True
    ).stdout
    assert taken.count("serverside-applied") == len(docs), taken
    listed = kubectl_real.json("get", "mcpservers,agents,channels,skills,gateways", "-o", "json")
    kinds = sorted({item["kind"] for item in listed["items"]})
    assert kinds == sorted({d["kind"] for d in docs if d["apiVersion"] == API}), kinds


@pytest.mark.parametrize(
    ("field", "words"),
    [
        ("mcpserver.spec", ["transport", "command", "url"]),
        ("mcpserver.spec.transport", ["stdio", "streamable-http"]),
        ("agent.spec.skills", ["<"]),
        ("gateway.spec", ["FIELDS:"]),
    ],
)
def test_kubectl_explain_reads_the_crd_descriptions(
    kubectl_real: OracleRunner, field: str, words: list[str]
) -> None:
    text = kubectl_real.run("explain", field, check=True).stdout
    assert f"KIND:       {field.split('.')[0].capitalize()}".lower()[:10] in text.lower(), text
    for word in words:
        assert word in text, text


def test_explain_has_the_descriptions_the_crd_carries(kubectl_real: OracleRunner, admin: Kube) -> None:
    crd = admin.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "mcpservers.clawplane.dev")
    assert crd is not None
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    described = {name: prop["description"] for name, prop in spec.items() if prop.get("description")}
    assert described, "the McpServer CRD has no field descriptions"
    text = " ".join(kubectl_real.run("explain", "mcpserver.spec", check=True).stdout.split())
    for name, description in sorted(described.items())[:10]:
        first_words = " ".join(description.split()[:5])
        assert first_words in text, f"{name}: {first_words!r} not in kubectl explain"


def test_diff_and_server_dry_run_show_the_change_and_store_nothing(
    kubectl_real: OracleRunner, admin: Kube, namespace: str
) -> None:
    obj = server("notes")
    kubectl_real.run("apply", "--server-side", "-f", "-", input=_dump([obj]), check=True)
    stored = admin.get(API, "McpServer", namespace, "notes")
    assert stored is not None
    changed = copy.deepcopy(obj)
    changed["spec"]["url"] = "http://elsewhere.example.test/mcp"
    diff = kubectl_real.run("diff", "--server-side", "-f", "-", input=_dump([changed]))
    assert diff.returncode == 1, diff.stdout + diff.stderr  # 1: differences found
    assert "-  url: http://notes.example.test/mcp" in diff.stdout, diff.stdout
    assert "+  url: http://elsewhere.example.test/mcp" in diff.stdout, diff.stdout
    dry = kubectl_real.run(
        "apply", "--server-side", "--dry-run=server", "-f", "-", input=_dump([changed]), check=True
    )
    assert "mcpserver.clawplane.dev/notes serverside-applied (server dry run)" in dry.stdout, dry.stdout
    after = admin.get(API, "McpServer", namespace, "notes")
    assert after is not None
    assert after["spec"]["url"] == "http://notes.example.test/mcp"
    assert after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    same = kubectl_real.run("diff", "--server-side", "-f", "-", input=_dump([obj]))
    assert same.returncode == 0 and same.stdout == "", same.stdout


def test_the_server_refuses_what_the_schema_forbids_with_the_field_path(
    kubectl_real: OracleRunner, namespace: str
) -> None:
    bad = server("bad")
    bad["spec"]["transport"] = "carrier-pigeon"
    refused = kubectl_real.run("apply", "--server-side", "-f", "-", input=_dump([bad]))
    assert refused.returncode == 1
    assert 'spec.transport: Unsupported value: "carrier-pigeon"' in refused.stderr, refused.stderr


def test_kubectl_get_prints_the_printer_columns(
    kubectl_real: OracleRunner, admin: Kube, namespace: str
) -> None:
    admin.apply({**server("notes"), "metadata": {"name": "notes", "namespace": namespace}})
    agent = {"apiVersion": API, "kind": "Agent", "metadata": {"name": "bot", "namespace": namespace},
             "spec": {"mcpServers": ["notes"]}}  # fmt: skip
    admin.apply(agent)
    for plural in ("mcpservers", "agents"):
        crd = admin.get(
            "apiextensions.k8s.io/v1", "CustomResourceDefinition", None, f"{plural}.clawplane.dev"
        )
        assert crd is not None
        declared = crd["spec"]["versions"][0]["additionalPrinterColumns"]
        columns = [c["name"].upper() for c in declared if not c.get("priority")]
        text = kubectl_real.run("get", plural, check=True).stdout
        assert text.splitlines()[0].split() == ["NAME", *columns], text
        assert text.splitlines()[1].split()[0] in ("notes", "bot"), text
        # Priority columns (the reason) only in the wide view, as `kubectl get -o wide` shows them.
        wide = kubectl_real.run("get", plural, "-o", "wide", check=True).stdout
        assert wide.splitlines()[0].split() == ["NAME", *(c["name"].upper() for c in declared)], wide


def test_two_field_managers_get_the_real_conflict(real_cluster: RealCluster, namespace: str) -> None:
    obj = {**server("notes"), "metadata": {"name": "notes", "namespace": namespace}}
    with real_cluster.admin() as kube:
        kube.apply(obj, manager="alice")
        theirs = copy.deepcopy(obj)
        theirs["spec"]["url"] = "http://bob.example.test/mcp"
        with pytest.raises(ApiError) as refused:
            kube.apply(theirs, manager="bob", force=False)
        assert refused.value.status_code == 409
        assert refused.value.status["reason"] == "Conflict"
        assert 'conflict with "alice"' in refused.value.status["message"]
        assert ".spec.url" in refused.value.status["message"]
        # Sharing a value is no conflict: bob now co-owns the field.
        kube.apply(obj, manager="bob", force=False)
        stored = kube.get(API, "McpServer", namespace, "notes")
        assert stored is not None
        managers = {entry["manager"] for entry in stored["metadata"]["managedFields"]}
        assert {"alice", "bob"} <= managers
