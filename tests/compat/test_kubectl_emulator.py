"""Real kubectl against the Kubernetes API emulator (tests/k8s): the commands our docs and tests rely on.

kubectl has no OpenAPI document to validate against here, so every apply passes ``--validate=false``;
the ``kubectl`` fixture isolates HOME, KUBECONFIG and KUBECACHEDIR per test.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.k8s.emulator import EmulatorThread
from tests.oracles.runners import OracleRunner

ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "manifests" / "crds" / "mcpservers.clawplane.dev.yaml"
JSON = dict[str, Any]


@pytest.fixture
def cluster(kubectl: OracleRunner) -> Iterator[EmulatorThread]:
    """An emulator with the McpServer CRD applied by kubectl and Established."""
    with EmulatorThread() as emu:
        emu.write_kubeconfig(Path(kubectl.env["KUBECONFIG"]))
        out = kubectl.run("apply", "--validate=false", "-f", str(CRD), check=True).stdout
        assert "customresourcedefinition.apiextensions.k8s.io/mcpservers.clawplane.dev created" in out
        waited = kubectl.run(
            "wait", "--for=condition=Established", "--timeout=20s", "crd/mcpservers.clawplane.dev", check=True
        )
        assert "condition met" in waited.stdout
        yield emu


def mcp(name: str = "time", transport: str = "stdio", **meta: Any) -> JSON:
    """A small McpServer manifest."""
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": name, **meta},
        "spec": {"transport": transport, "command": "uvx", "args": ["mcp-server-time"]},
    }


def apply(kubectl: OracleRunner, obj: JSON, *flags: str) -> str:
    """``kubectl apply -f -`` of one object; returns stdout."""
    return kubectl.run(
        "apply", "--validate=false", *flags, "-f", "-", input=yaml.safe_dump(obj), check=True
    ).stdout


def test_apply_creates_then_configures(kubectl: OracleRunner, cluster: EmulatorThread) -> None:
    assert apply(kubectl, mcp()).strip() == "mcpserver.clawplane.dev/time created"
    assert apply(kubectl, mcp(transport="streamable-http")).strip() == "mcpserver.clawplane.dev/time configured"
    assert apply(kubectl, mcp(transport="streamable-http")).strip() == "mcpserver.clawplane.dev/time unchanged"
    stored = cluster.get("mcpservers", "default", "time")
    assert stored is not None and stored["spec"]["transport"] == "streamable-http"
    assert stored["metadata"]["generation"] == 2


def test_get_yaml_and_label_selection(kubectl: OracleRunner, cluster: EmulatorThread) -> None:
    apply(kubectl, mcp("a", labels={"team": "alpha"}))
    apply(kubectl, mcp("b", labels={"team": "beta"}))
    got = yaml.safe_load(kubectl.run("get", "mcp", "a", "-o", "yaml", check=True).stdout)
    stored = cluster.get("mcpservers", "default", "a")
    assert stored is not None and got["metadata"]["uid"] == stored["metadata"]["uid"]
    assert kubectl.run("get", "mcpservers", "-l", "team=alpha", "-o", "name", check=True).stdout.split() == [
        "mcpserver.clawplane.dev/a"
    ]
    assert kubectl.run(
        "get", "mcps", "-l", "team notin (alpha)", "-o", "name", check=True
    ).stdout.split() == ["mcpserver.clawplane.dev/b"]
    listed = yaml.safe_load(kubectl.run("get", "ns", "-o", "yaml", check=True).stdout)
    assert [n["metadata"]["name"] for n in listed["items"]] == ["default"]


def test_patch_status_subresource(kubectl: OracleRunner, cluster: EmulatorThread) -> None:
    apply(kubectl, mcp())
    patch = '{"status": {"toolCount": 3}, "spec": {"transport": "ignored"}}'
    out = kubectl.run("patch", "mcp", "time", "--subresource=status", "--type=merge", "-p", patch, check=True)
    assert "patched" in out.stdout
    stored = cluster.get("mcpservers", "default", "time")
    assert stored is not None and stored["status"] == {"toolCount": 3}
    assert stored["spec"]["transport"] == "stdio" and stored["metadata"]["generation"] == 1
    assert ("PATCH", "/apis/clawplane.dev/v1alpha1/namespaces/default/mcpservers/time/status", "status") in (
        cluster.writes("mcpservers")
    )


def release_when_marked(cluster: EmulatorThread, seen: list[JSON]) -> None:
    """Wait for the deletion mark, then remove the finalizer (as an operator would)."""
    marked = cluster.wait_for(
        lambda: (
            (obj := cluster.get("mcpservers", "default", "held"))
            and obj["metadata"].get("deletionTimestamp")
            and obj
        ),
        timeout=30,
    )
    seen.append(copy.deepcopy(marked))
    cluster.apply_object(
        {**mcp("held", namespace="default"), "metadata": {**marked["metadata"], "finalizers": []}}
    )


def test_delete_waits_for_the_finalizer(kubectl: OracleRunner, cluster: EmulatorThread) -> None:
    apply(kubectl, mcp("held", finalizers=["clawplane.dev/finalizer"]))
    seen: list[JSON] = []
    releaser = threading.Thread(target=release_when_marked, args=(cluster, seen))
    releaser.start()
    try:
        out = kubectl.run("delete", "mcp", "held", "--timeout=30s", check=True)
    finally:
        releaser.join(40)
    assert 'mcpserver.clawplane.dev "held" deleted' in out.stdout
    assert seen and seen[0]["metadata"]["finalizers"] == ["clawplane.dev/finalizer"]
    assert cluster.get("mcpservers", "default", "held") is None
    assert cluster.history("mcpservers", "default", "held")[-1] is None


def test_server_side_apply(kubectl: OracleRunner, cluster: EmulatorThread) -> None:
    assert "serverside-applied" in apply(kubectl, mcp("ssa"), "--server-side")
    assert "serverside-applied" in apply(kubectl, mcp("ssa", transport="sse"), "--server-side")
    stored = cluster.get("mcpservers", "default", "ssa")
    assert stored is not None and stored["spec"]["transport"] == "sse"
    assert [verb for verb, _, _ in cluster.writes("mcpservers", name="ssa")] == ["PATCH", "PATCH"]


def test_diff_stores_nothing(kubectl: OracleRunner, cluster: EmulatorThread) -> None:
    apply(kubectl, mcp())
    before = cluster.get("mcpservers", "default", "time")
    writes = cluster.writes("mcpservers")
    changed = kubectl.run("diff", "-f", "-", input=yaml.safe_dump(mcp(transport="sse")))
    assert changed.returncode == 1, changed.stderr
    assert "+  transport: sse" in changed.stdout
    assert kubectl.run("diff", "-f", "-", input=yaml.safe_dump(mcp("new"))).returncode == 1
    same = kubectl.run("diff", "-f", "-", input=yaml.safe_dump(mcp()))
    assert same.returncode == 0, same.stdout + same.stderr
    assert cluster.get("mcpservers", "default", "time") == before
    assert cluster.get("mcpservers", "default", "new") is None
    assert cluster.writes("mcpservers") == writes


def test_replace(kubectl: OracleRunner, cluster: EmulatorThread) -> None:
    apply(kubectl, mcp())
    out = kubectl.run(
        "replace", "--validate=false", "-f", "-", input=yaml.safe_dump(mcp(transport="streamable-http")), check=True
    )
    assert out.stdout.strip() == "mcpserver.clawplane.dev/time replaced"
    stored = cluster.get("mcpservers", "default", "time")
    assert stored is not None and stored["spec"]["transport"] == "streamable-http"
    assert stored["metadata"]["generation"] == 2
    assert "kubectl.kubernetes.io/last-applied-configuration" not in stored["metadata"].get("annotations", {})


def test_errors_read_like_a_real_server(kubectl: OracleRunner, cluster: EmulatorThread) -> None:
    missing = kubectl.run("get", "mcp", "nope")
    assert missing.returncode == 1
    assert 'Error from server (NotFound): mcpservers.clawplane.dev "nope" not found' in missing.stderr
    apply(kubectl, mcp())
    taken = kubectl.run("create", "--validate=false", "-f", "-", input=yaml.safe_dump(mcp()))
    assert 'mcpservers.clawplane.dev "time" already exists' in taken.stderr
    # kubectl's typed generators send protobuf, which the emulator refuses explicitly (known gap).
    proto = kubectl.run("create", "namespace", "team-a")
    assert "UnsupportedMediaType" in proto.stderr
