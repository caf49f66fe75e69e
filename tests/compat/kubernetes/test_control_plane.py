"""The control plane the Kubernetes tests stand on is the pinned one, with authentication and RBAC on."""

from __future__ import annotations

import subprocess

import httpx
import pytest
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import ApiError, Kube
from tests.oracles import locate

pytestmark = pytest.mark.compat


def test_the_binaries_are_the_pinned_versions(real_cluster: RealCluster) -> None:
    pins = locate.pins()
    for name in ("kube-apiserver", "kube-controller-manager"):
        out = subprocess.run(
            [str(real_cluster.bins[name]), "--version"], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == f"Kubernetes v{pins['KUBERNETES_VERSION']}", out.stdout
    etcd = subprocess.run(
        [str(real_cluster.bins["etcd"]), "--version"], capture_output=True, text=True, check=True
    )
    assert f"etcd Version: {pins['ETCD_VERSION']}" in etcd.stdout, etcd.stdout
    with real_cluster.admin() as kube:
        version = kube.request("GET", "/version").json()
    assert version["gitVersion"] == f"v{pins['KUBERNETES_VERSION']}", version


def test_anonymous_and_unbound_clients_are_refused(
    real_cluster: RealCluster, admin: Kube, namespace: str
) -> None:
    with httpx.Client(base_url=real_cluster.url, verify=str(real_cluster.ca), timeout=30) as anonymous:
        answer = anonymous.get(f"/apis/clawplane.dev/v1alpha1/namespaces/{namespace}/mcpservers")
    assert answer.status_code == 403, answer.text
    assert 'User "system:anonymous" cannot list resource "mcpservers"' in answer.json()["message"]
    admin.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nobody", "namespace": namespace}}
    )
    token = real_cluster.service_account_token(namespace, "nobody")
    with real_cluster.client(token) as nobody, pytest.raises(ApiError) as refused:
        nobody.list("clawplane.dev/v1alpha1", "McpServer", namespace)
    assert refused.value.status_code == 403
    assert f"system:serviceaccount:{namespace}:nobody" in refused.value.status["message"]
    with real_cluster.client("not-a-token") as stranger, pytest.raises(ApiError) as unknown:
        stranger.list("v1", "Namespace")
    assert unknown.value.status_code == 401
