"""The Helm chart, rendered and installed through a real API server: every object is accepted.

The real server's own validation and defaulting of the built-in kinds (Deployment, Service,
PodDisruptionBudget, RBAC, ...) replaces kubernetes-validate here; the chart's CRDs are the
generated ones. Installed as ``helm install`` would create them (server-side apply, field
manager ``helm``), then uninstalled.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from ruamel.yaml import YAML
from tests.k8s import helmutil
from tests.k8s.real.client import ApiError, Kube

JSON = dict[str, Any]
pytestmark = pytest.mark.compat


@contextmanager
def installed(admin: Kube, values: JSON) -> Iterator[list[JSON]]:
    """The chart's templates created (its namespace first), deleted afterwards."""
    docs = helmutil.render(values)
    if admin.get("v1", "Namespace", None, helmutil.RELEASE_NAMESPACE) is None:
        admin.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": helmutil.RELEASE_NAMESPACE}}
        )
    created: list[JSON] = []
    try:
        for doc in docs:
            doc.setdefault("metadata", {})
            if doc["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
                doc["metadata"].setdefault("namespace", helmutil.RELEASE_NAMESPACE)
            try:
                created.append(admin.apply(doc, manager="helm", force=False))
            except ApiError as err:
                raise AssertionError(f"{helmutil.ident(doc)} refused: {err.status.get('message')}") from None
        yield created
    finally:
        for obj in reversed(created):
            meta = obj["metadata"]
            admin.delete(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])


def test_the_charts_crds_are_the_generated_ones_and_the_server_accepts_them(admin: Kube) -> None:
    for path in sorted((helmutil.CHART / "crds").glob("*.yaml")):
        crd = YAML(typ="safe").load(path)
        dry = admin.apply(crd, manager="helm", dry_run=True)
        assert dry["spec"]["names"]["kind"] == crd["spec"]["names"]["kind"]


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"replicaCount": 1, "watchNamespaces": ["team-a", "team-b"], "networkPolicy": {"enabled": False}},
        {"podDisruptionBudget": {"enabled": True, "minAvailable": 2}, "replicaCount": 3},
    ],
    ids=["defaults", "namespaced-single-replica", "pdb"],
)
def test_every_rendered_object_is_accepted(admin: Kube, values: JSON) -> None:
    for ns in values.get("watchNamespaces", []):
        if admin.get("v1", "Namespace", None, ns) is None:
            admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    with installed(admin, values) as created:
        kinds = sorted({obj["kind"] for obj in created})
        assert "Deployment" in kinds and "ServiceAccount" in kinds, kinds
        deployment = next(obj for obj in created if obj["kind"] == "Deployment")
        # Server defaults were applied (what kubernetes-validate cannot show).
        assert deployment["spec"]["strategy"]["type"] in ("RollingUpdate", "Recreate")
        assert deployment["spec"]["template"]["spec"]["containers"][0]["terminationMessagePath"]
        if values.get("replicaCount", 2) > 1:
            assert "PodDisruptionBudget" in kinds, kinds
        if values.get("watchNamespaces"):
            roles = {
                (o["metadata"].get("namespace"), o["metadata"]["name"])
                for o in created
                if o["kind"] == "Role"
            }
            assert {(ns, "clawplane") for ns in values["watchNamespaces"]} <= roles, roles
