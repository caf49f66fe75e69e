"""Deleting an McpServer on a real API server: the operator's finalizer, then the real garbage collector.

The controller manager's garbage collector (not the emulator's) removes the children through
their ownerReferences; with ``--cascade=foreground`` the McpServer stays (deletionTimestamp set,
the foregroundDeletion finalizer) until its children are gone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.k8s.operator_run import OperatorRun, wait_for
from tests.k8s.real.client import Kube
from tests.oracles.runners import OracleRunner

ROOT = Path(__file__).resolve().parents[3]
SERVER_PY = ROOT / "tests" / "fixtures" / "servers" / "normal_server.py"
API = "clawplane.dev/v1alpha1"
CHILDREN = (
    ("apps/v1", "Deployment", "mcp-notes"),
    ("v1", "Service", "mcp-notes"),
    ("v1", "Secret", "mcp-notes-token"),
)
pytestmark = pytest.mark.compat


@pytest.mark.parametrize("cascade", ["background", "foreground"])
def test_a_deleted_server_takes_its_children_with_it(
    kubectl_real: OracleRunner, admin: Kube, namespace: str, operator: OperatorRun, cascade: str
) -> None:
    notes = {"apiVersion": API, "kind": "McpServer", "metadata": {"name": "notes", "namespace": namespace},
             "spec": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER_PY)]}}  # fmt: skip
    admin.apply(notes)
    for api_version, kind, name in CHILDREN:
        child = wait_for(
            f"{kind} {name}", lambda a=api_version, k=kind, n=name: admin.get(a, k, namespace, n)
        )
        owners = child["metadata"]["ownerReferences"]
        assert [(o["kind"], o["name"]) for o in owners] == [("McpServer", "notes")], owners
    stored = admin.get(API, "McpServer", namespace, "notes")
    assert stored is not None and stored["metadata"].get("finalizers"), (
        "the operator's finalizer is not on it"
    )

    deleted = kubectl_real.run("delete", "mcpserver", "notes", f"--cascade={cascade}", "--wait=true",
                               "--timeout=90s", check=True)  # fmt: skip
    assert 'mcpserver.clawplane.dev "notes" deleted' in deleted.stdout
    assert admin.get(API, "McpServer", namespace, "notes") is None
    if cascade == "foreground":  # the children block the owner's deletion (blockOwnerDeletion)
        left = [name for a, k, name in CHILDREN if admin.get(a, k, namespace, name) is not None]
        assert not left, f"the McpServer went before its children {left}"
    for api_version, kind, name in CHILDREN:
        wait_for(
            f"{kind} {name} to be collected",
            lambda a=api_version, k=kind, n=name: admin.get(a, k, namespace, n) is None,
        )
