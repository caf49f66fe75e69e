"""A user's server-side apply and the operator's writes share objects as field managers do.

The operator runs in-process with the admin's kubeconfig (RBAC is test_operator_rbac's subject);
the user is real kubectl with ``--server-side``. The operator's writes are recorded under its own
manager name, ``clawplane-operator``, which is what a conflicting user is told.
"""

from __future__ import annotations

import copy
import io
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from tests.k8s.operator_run import OperatorRun, wait_for
from tests.k8s.real.client import Kube
from tests.oracles.runners import OracleRunner

from clawplane.k8s.api.kubeapi import FIELD_MANAGER

ROOT = Path(__file__).resolve().parents[3]
SERVER_PY = ROOT / "tests" / "fixtures" / "servers" / "normal_server.py"
API = "clawplane.dev/v1alpha1"
JSON = dict[str, Any]
pytestmark = pytest.mark.compat


def _dump(obj: JSON) -> str:
    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(obj, out)
    return out.getvalue()


def _managers(obj: JSON) -> dict[tuple[str, str], str]:
    """(manager, subresource) -> operation, from managedFields."""
    return {
        (e["manager"], e.get("subresource", "")): e["operation"] for e in obj["metadata"]["managedFields"]
    }


def test_user_apply_and_operator_writes_coexist_and_the_user_meets_the_operators_fields(
    kubectl_real: OracleRunner, admin: Kube, namespace: str, operator: OperatorRun
) -> None:
    notes = {"apiVersion": API, "kind": "McpServer", "metadata": {"name": "notes", "namespace": namespace},
             "spec": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER_PY)]}}  # fmt: skip
    kubectl_real.run("apply", "--server-side", "-f", "-", input=_dump(notes), check=True)
    deployment = wait_for(
        "the operator's Deployment", lambda: admin.get("apps/v1", "Deployment", namespace, "mcp-notes")
    )
    assert (FIELD_MANAGER, "") in _managers(deployment), _managers(deployment)
    written = wait_for(
        "the operator's status on the McpServer",
        lambda: (
            (o := admin.get(API, "McpServer", namespace, "notes"))
            and (FIELD_MANAGER, "status") in _managers(o)
            and o
        ),
    )
    assert _managers(written)[("kubectl", "")] == "Apply", _managers(written)

    # The user changes the spec: the operator's status writes are no conflict.
    changed = copy.deepcopy(notes)
    changed["spec"]["args"].append("--sdk")
    again = kubectl_real.run("apply", "--server-side", "-f", "-", input=_dump(changed))
    assert again.returncode == 0 and "serverside-applied" in again.stdout, again.stdout + again.stderr

    # The user sets a field the operator wrote on its child: the real conflict, naming the operator.
    scale = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mcp-notes", "namespace": namespace},
             "spec": {"replicas": 3}}  # fmt: skip
    refused = kubectl_real.run("apply", "--server-side", "-f", "-", input=_dump(scale))
    assert refused.returncode == 1, refused.stdout
    assert f'conflict with "{FIELD_MANAGER}"' in refused.stderr and ".spec.replicas" in refused.stderr, (
        refused.stderr
    )


def test_the_operators_events_are_what_kubectl_get_events_shows(
    kubectl_real: OracleRunner, admin: Kube, namespace: str, operator: OperatorRun
) -> None:
    notes = {"apiVersion": API, "kind": "McpServer", "metadata": {"name": "notes", "namespace": namespace},
             "spec": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER_PY)]}}  # fmt: skip
    admin.apply(notes)
    # Events are posted in the background: wait until one per child is in (four children).
    listed = wait_for(
        "a Created Event for each child of McpServer notes",
        lambda: (
            (out := kubectl_real.run("get", "events", "-o", "wide", check=True).stdout).count("Created") >= 4
            and out
        ),
    )
    header = listed.splitlines()[0].split()
    assert header[:4] == ["LAST", "SEEN", "TYPE", "REASON"], listed
    rows = [line for line in listed.splitlines()[1:] if " Created " in line]
    assert any("mcpserver/notes" in row for row in rows), listed
    assert all("clawplane.dev/operator" in row for row in rows), listed
