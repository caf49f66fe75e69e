"""The Kubernetes quick start of docs/kubernetes.md, run as written with the real kubectl on a real API server.

The commands are read from docs/kubernetes.md (the shell block after "or without Helm (cluster-wide),
then the demo"), so the test and the documentation cannot drift apart. They run against a control
plane of their own (tests/k8s/real: etcd, kube-apiserver, kube-controller-manager), empty as a new
cluster is, so ``kubectl apply -k manifests`` creates the CRDs. Then the operator starts as its
Deployment would (here in-process: no node runs its pod), authenticated as the manifests'
ServiceAccount with a token from the TokenRequest API, so the manifests' RBAC decides each of its
requests; the process kubelet (tests/k8s/real/kubelet.py) runs the example's ``time`` server pod.
kubectl runs with its defaults (``--validate=strict``).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.compat.conftest import require_oracle
from tests.k8s.operator_run import OperatorRun
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.audit import AuditWindow
from tests.k8s.real.kubelet import RealKubelet
from tests.oracles import locate
from tests.oracles.runners import OracleRunner

ROOT = Path(__file__).resolve().parents[2]
OPERATOR = "system:serviceaccount:clawplane-system:clawplane"
DEMO = "clawplane-demo"
pytestmark = pytest.mark.compat


def quick_start() -> list[str]:
    text = (ROOT / "docs" / "kubernetes.md").read_text(encoding="utf-8")
    match = re.search(r"or without Helm \(cluster-wide\), then the demo:\s*```sh\n(.*?)```", text, re.S)
    assert match, "the Kubernetes quick start block of docs/kubernetes.md is gone"
    return [line.split("#")[0].strip() for line in match.group(1).splitlines() if line.split("#")[0].strip()]


class Quickstart:
    """A new, empty control plane, and what the test starts on it (stopped afterwards)."""

    def __init__(self, cluster: RealCluster, kubectl: OracleRunner, tmp: Path) -> None:
        self.cluster, self.tmp = cluster, tmp
        cluster.write_kubeconfig(Path(kubectl.env["KUBECONFIG"]), cluster.admin_token, "admin")
        self.audit = AuditWindow(cluster.audit_log, OPERATOR)
        self.kubelet: RealKubelet | None = None
        self.operator: OperatorRun | None = None

    def start_operator(self) -> None:
        """The operator under the manifests' ServiceAccount, and the kubelet of the demo namespace."""
        token = self.cluster.service_account_token("clawplane-system", "clawplane")
        config = self.cluster.write_kubeconfig(self.tmp / "operator.kubeconfig", token, "clawplane")
        self.kubelet = RealKubelet(self.cluster.admin(), self.tmp / "pods", (DEMO,)).start()
        self.operator = OperatorRun(config, self.tmp / "state", routes=self.kubelet.resolve).start()

    def stop(self) -> None:
        """Stop the operator, then the kubelet."""
        try:
            if self.operator is not None:
                self.operator.stop()
        finally:
            if self.kubelet is not None:
                self.kubelet.stop()


@pytest.fixture
def quickstart(kubectl: OracleRunner, tmp_path: Path) -> Iterator[Quickstart]:
    require_oracle("kubernetes")
    bins = locate.kubernetes_bins()
    assert bins is not None
    with RealCluster(tmp_path / "kube", bins) as cluster:
        run = Quickstart(cluster, kubectl, tmp_path)
        try:
            yield run
        finally:
            run.stop()


@pytest.mark.timeout(300)  # the docs wait up to 180 s; kubectl and the pods take seconds to start here
def test_the_readme_quick_start_works_as_written(kubectl: OracleRunner, quickstart: Quickstart) -> None:
    readme = dataclasses.replace(kubectl, cwd=ROOT)  # the docs' paths are relative to the checkout
    lines = quick_start()
    assert lines[0] == "kubectl apply -k manifests" and any(line.startswith("kubectl wait") for line in lines)
    outputs: list[str] = []
    for line in lines:
        argv = shlex.split(line)
        assert argv[0] == "kubectl", line
        done = readme.run(*argv[1:], timeout=240)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        assert "Warning" not in done.stderr, f"{line}: {done.stderr}"
        outputs.append(done.stdout)
        if line == "kubectl apply -k manifests":
            assert "customresourcedefinition.apiextensions.k8s.io/mcpservers.clawplane.dev created" in done.stdout
            assert "deployment.apps/clawplane-operator created" in done.stdout
            quickstart.start_operator()
    table = outputs[-1]
    assert re.search(r"mcpserver\.clawplane\.dev/time\s+stdio\s+\d+\s+True", table), table
    assert re.search(r"agent\.clawplane\.dev/assistant\s+\d+\s+", table), table
    assert not quickstart.audit.refused(), f"the manifests' RBAC refused the operator: {quickstart.audit.refused()}"
    assert quickstart.audit.mine(), "the audit log has no request of the operator"
