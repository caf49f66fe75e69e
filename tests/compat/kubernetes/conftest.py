"""A real control plane (tests/k8s/real) for the tests in this folder: one per xdist worker.

It starts once per worker session (etcd, kube-apiserver, kube-controller-manager: about 10-20 s)
with clawplane's CRDs applied and Established; every test gets a namespace of its own. Without the
binaries (tests/oracles/install.sh builds them with Go) the tests skip with ORACLE UNAVAILABLE,
or fail under ``CLAWPLANE_REQUIRE_ORACLES=1``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from tests.compat.conftest import require_oracle
from tests.k8s.operator_run import OperatorRun, wait_for
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube
from tests.k8s.real.operator_cluster import RealOperatorCluster, real_operator_cluster
from tests.oracles import locate
from tests.oracles.runners import OracleRunner

ROOT = Path(__file__).resolve().parents[3]
CRDS = ROOT / "manifests" / "crds"


def crd_documents() -> list[dict[str, object]]:
    """Every generated CRD manifest."""
    return [YAML(typ="safe").load(path) for path in sorted(CRDS.glob("*.yaml"))]


def _established(kube: Kube, name: str) -> bool:
    crd = kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, name) or {}
    conditions = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
    return conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"


@pytest.fixture(scope="session")
def real_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealCluster]:
    """The started control plane, clawplane's CRDs installed (server-side apply, as the docs say)."""
    require_oracle("kubernetes")
    bins = locate.kubernetes_bins()
    assert bins is not None
    cluster = RealCluster(tmp_path_factory.mktemp("kube", numbered=True), bins)
    with cluster:
        with cluster.admin() as kube:
            for crd in crd_documents():
                kube.apply(crd, manager="clawplane-install")
            for crd in crd_documents():
                name = str(crd["metadata"]["name"])  # type: ignore[index]
                wait_for(f"CRD {name} to be Established", lambda n=name: _established(kube, n))  # type: ignore[misc]
        yield cluster


@pytest.fixture
def namespace(real_cluster: RealCluster) -> str:
    """A namespace of this test's own (the controller manager deletes its contents with it)."""
    return real_cluster.new_namespace()


@pytest.fixture
def admin(real_cluster: RealCluster) -> Iterator[Kube]:
    """An API client in ``system:masters``."""
    with real_cluster.admin() as kube:
        yield kube


@pytest.fixture
def kubectl_real(kubectl: OracleRunner, real_cluster: RealCluster, namespace: str) -> OracleRunner:
    """Real kubectl whose kubeconfig reaches the real API server as admin, in ``namespace``."""
    config = Path(kubectl.env["KUBECONFIG"])
    config.parent.mkdir(parents=True, exist_ok=True)
    real_cluster.write_kubeconfig(config, real_cluster.admin_token, "admin", namespace)
    return kubectl


@pytest.fixture
def operator(real_cluster: RealCluster, namespace: str, tmp_path: Path) -> Iterator[OperatorRun]:
    """The operator (in-process kopf) watching the test's namespace, as the admin."""
    config = real_cluster.write_kubeconfig(tmp_path / "admin.kubeconfig", real_cluster.admin_token, "admin")
    with OperatorRun(config, tmp_path / "state", namespaces=(namespace,)) as run:
        yield run


@pytest.fixture
def cluster(real_cluster: RealCluster, admin: Kube, tmp_path: Path) -> Iterator[RealOperatorCluster]:
    """tests/k8s/cluster.py's ``Cluster`` on the real server: namespace ``demo`` of its own, a kubelet,
    and the operator under the chart's identity (tests/k8s/real/operator_cluster.py)."""
    with real_operator_cluster(real_cluster, admin, tmp_path) as c:
        yield c
