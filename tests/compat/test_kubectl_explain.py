"""Real ``kubectl explain`` reads OpenClaw's descriptions from the generated CRDs.

The API emulator (tests/k8s) serves ``/openapi/v3`` for kubectl's field validation only, with
no schemas. Here its group-version document also carries each applied CRD's schema under
``components.schemas``, with the ``x-kubernetes-group-version-kind`` a real API server gives
it, which is all ``kubectl explain`` reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from tests.k8s.emulator import EmulatorThread
from tests.k8s.openapi import OpenApiMixin
from tests.oracles.runners import OracleRunner

from clawplane.schema.openclaw import describe, node_at

ROOT = Path(__file__).resolve().parents[2]
CRDS = ROOT / "manifests" / "crds"
pytestmark = pytest.mark.compat


def _crd_components() -> dict[str, dict[str, Any]]:
    """``components.schemas`` of each group-version, as the API server publishes a CRD's schema."""
    docs: dict[str, dict[str, Any]] = {}
    for path in sorted(CRDS.glob("*.yaml")):
        crd = YAML(typ="safe").load(path)
        spec = crd["spec"]
        for version in spec["versions"]:
            gvk = {"group": spec["group"], "version": version["name"], "kind": spec["names"]["kind"]}
            name = ".".join([*reversed(spec["group"].split(".")), version["name"], spec["names"]["kind"]])
            schema = {**version["schema"]["openAPIV3Schema"], "x-kubernetes-group-version-kind": [gvk]}
            docs.setdefault(f"apis/{spec['group']}/{version['name']}", {})[name] = schema
    return docs


@pytest.fixture
def cluster(kubectl: OracleRunner, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorThread]:
    """An emulator whose OpenAPI documents carry the CRDs' schemas, with every CRD applied."""
    components = _crd_components()
    served = OpenApiMixin._group_versions_docs

    def with_schemas(self: OpenApiMixin) -> dict[str, dict[str, Any]]:
        docs = served(self)
        for gv, doc in docs.items():
            if gv in components:
                doc["components"] = {"schemas": components[gv]}
        return docs

    monkeypatch.setattr(OpenApiMixin, "_group_versions_docs", with_schemas)
    with EmulatorThread() as emu:
        emu.write_kubeconfig(Path(kubectl.env["KUBECONFIG"]))
        # Server-side: the Gateway CRD is too big for client-side apply's last-applied annotation.
        kubectl.run("apply", "--server-side", "--validate=false", "-f", str(CRDS), check=True)
        kubectl.run("wait", "--for=condition=Established", "crd", "--all", "--timeout=30s", check=True)
        yield emu


def _explain(kubectl: OracleRunner, field: str) -> str:
    return kubectl.run("explain", field, check=True).stdout


def test_kubectl_explain_prints_openclaw_descriptions(kubectl: OracleRunner, cluster: EmulatorThread) -> None:
    sandbox = _explain(kubectl, "agent.spec.sandbox")
    assert "agents.entries.<id>.sandbox" in sandbox
    for field in ("mode", "docker", "workspaceAccess"):
        assert field in sandbox
    _, mode_text = describe(node_at(("agents", "entries", "*", "contextInjection")) or {})
    assert mode_text and " ".join(mode_text.split()[:6]) in " ".join(
        _explain(kubectl, "agent.spec.contextInjection").split()
    )
    _, auth_text = describe(node_at(("gateway", "auth")) or {})
    auth = " ".join(_explain(kubectl, "gateway.spec.gateway.auth").split())
    assert " ".join(auth_text.split()[:8]) in auth and "trustedProxy" in auth
    homeserver = _explain(kubectl, "channel.spec.homeserver")
    assert "Only for type: matrix" in " ".join(homeserver.split())
