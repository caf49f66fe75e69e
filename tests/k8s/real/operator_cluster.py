"""The operator tests' ``Cluster`` on the real API server: the operator under the chart's identity.

tests/k8s/cluster.py's ``Cluster`` (an operator, a kubelet and helpers over both) was written
against the emulator; ``RealApi`` offers the part of the emulator's interface those tests use
(get, list, apply, delete, wait, and the operator's own writes, reads and watches) over a real
API server, so the same tests run against Kubernetes itself:

- Each test's objects go to a namespace of its own: the logical names the tests use (``demo``,
  ``elsewhere``) are mapped to fresh namespaces, on the way in and in every lookup.
- ``apply_object`` is server-side apply by the test's field manager (server-set metadata and
  status left out), the real counterpart of the emulator's merge-into-existing.
- The operator runs with a token of the chart's ServiceAccount (the chart's RBAC created once per
  control plane, release ``clawplane-e2e``), so RBAC authorizes its every request, and the audit
  log (``audit.AuditWindow``) tells its requests from the test's and the kubelet's: ``writes``,
  ``request_tally`` and ``watches`` count what the operator alone did. A request RBAC refused
  fails the test at teardown.
"""

from __future__ import annotations

import copy
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from tests.k8s import helmutil
from tests.k8s.operator_run import OperatorRun, ready_at, wait_for
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.audit import AuditWindow
from tests.k8s.real.client import Kube
from tests.k8s.real.kubelet import RealKubelet
from tests.support.patience import CONDITION_S

JSON = dict[str, Any]
T = TypeVar("T")
API = "clawplane.dev/v1alpha1"
RELEASE = "clawplane-e2e"
"""A release of its own, so tests that create and delete the chart's RBAC (test_operator_rbac.py) never touch it."""
OPERATOR_USER = f"system:serviceaccount:{RELEASE}:{RELEASE}"
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
KINDS: dict[str, tuple[str, str]] = {
    "mcpservers": (API, "McpServer"),
    "agents": (API, "Agent"),
    "gateways": (API, "Gateway"),
    "channels": (API, "Channel"),
    "skills": (API, "Skill"),
    "modelproviders": (API, "ModelProvider"),
    "deployments": ("apps/v1", "Deployment"),
    "services": ("v1", "Service"),
    "configmaps": ("v1", "ConfigMap"),
    "secrets": ("v1", "Secret"),
    "pods": ("v1", "Pod"),
    "networkpolicies": ("networking.k8s.io/v1", "NetworkPolicy"),
    "events.events.k8s.io": ("events.k8s.io/v1", "Event"),
    "customresourcedefinitions": ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
}
SERVER_SET = (
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "managedFields",
    "deletionTimestamp",
)


def install_chart_identity(admin: Kube) -> None:
    """The chart's ServiceAccount and cluster-wide RBAC (release ``clawplane-e2e``), once per control plane."""
    if admin.get("v1", "ServiceAccount", RELEASE, RELEASE) is not None:
        return
    if admin.get("v1", "Namespace", None, RELEASE) is None:
        admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": RELEASE}})
    for doc in helmutil.render({"fullnameOverride": RELEASE}, namespace=RELEASE):
        if doc["kind"] in RBAC_KINDS:
            admin.apply(doc, manager="helm")


class RealApi:
    """The emulator's test interface over a real API server, in namespaces of the test's own."""

    def __init__(self, cluster: RealCluster, admin: Kube, namespaces: dict[str, str], tmp: Path) -> None:
        self.cluster, self.admin, self.namespaces = cluster, admin, namespaces
        self.audit = AuditWindow(cluster.audit_log, OPERATOR_USER)
        token = cluster.service_account_token(RELEASE, RELEASE)
        self.kubeconfig: Path = cluster.write_kubeconfig(tmp / "operator.kubeconfig", token, RELEASE)

    def ns(self, logical: str | None) -> str | None:
        """The real namespace behind a test's namespace name."""
        return None if logical is None else self.namespaces.get(logical, logical)

    def get(self, plural: str, namespace: str | None, name: str) -> JSON | None:
        """The live object, or None."""
        return self.admin.get(*KINDS[plural], self.ns(namespace), name)

    def list(self, plural: str, namespace: str | None = None) -> list[JSON]:
        """Live objects of a resource, sorted by namespace and name (as the emulator sorts them)."""
        api_version, kind = KINDS[plural]
        items = self.admin.list(api_version, kind, self.ns(namespace))
        for item in items:
            item.setdefault("apiVersion", api_version)
            item.setdefault("kind", kind)
        return sorted(items, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))

    def apply_object(self, obj: JSON) -> JSON:
        """Server-side apply as the test's manager: what a user's ``kubectl apply --server-side`` does."""
        body = copy.deepcopy(obj)
        body.pop("status", None)
        meta = body["metadata"]
        for field in SERVER_SET:
            meta.pop(field, None)
        if meta.get("namespace"):
            meta["namespace"] = self.ns(meta["namespace"])
        return self.admin.apply(body, manager="clawplane-tests")

    def delete_object(self, plural: str, namespace: str | None, name: str) -> None:
        """DELETE (background propagation, finalizers honoured); gone already is fine."""
        self.admin.delete(*KINDS[plural], self.ns(namespace), name)

    def wait_for(self, predicate: Callable[[], T | None], timeout: float = CONDITION_S) -> T:
        """Poll ``predicate`` until truthy (a real API server has no hook into its store)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = predicate()
            if found:
                return found
            time.sleep(0.05)
        raise TimeoutError

    def writes(
        self, plural: str, namespace: str | None = None, name: str | None = None
    ) -> list[tuple[str, str, str | None]]:
        """The operator's writes to ``plural`` (from the audit log): ``(HTTP verb, name, subresource)``."""
        self.audit.settle(self.admin)
        return self.audit.writes(plural.partition(".")[0], self.ns(namespace), name)

    def request_tally(self) -> Counter[tuple[str, str, str | None]]:
        """The operator's requests by ``(verb, resource, subresource)``."""
        self.audit.settle(self.admin)
        return self.audit.tally()

    def watches(self) -> list[tuple[str, str | None, str | None]]:
        """The watches the operator opened: ``(resource, namespace, labelSelector)``."""
        self.audit.settle(self.admin)
        return self.audit.watches()

    def write_tally(self) -> Counter[tuple[str, str, str | None]]:
        """The operator's writes by ``(HTTP verb, resource, subresource)``."""
        self.audit.settle(self.admin)
        return self.audit.write_tally()

    def clear_writes(self) -> None:
        """Count from now on."""
        self.audit.settle(self.admin)
        self.audit.reopen()


class RealOperatorCluster:
    """tests/k8s/cluster.py's ``Cluster`` on the real API server (same helpers, same names)."""

    def __init__(
        self,
        cluster: RealCluster,
        admin: Kube,
        tmp: Path,
        *,
        logical: tuple[str, ...] = ("demo",),
        kubelet: bool = True,
    ) -> None:
        self.namespaces = {name: cluster.new_namespace() for name in logical}
        self.namespace = self.namespaces[logical[0]]
        self.emu = RealApi(cluster, admin, self.namespaces, tmp)
        self.tmp = tmp
        self._kubelet = (
            RealKubelet(cluster.admin(), tmp / "pods", tuple(self.namespaces.values())).start()
            if kubelet
            else None
        )
        self._op: OperatorRun | None = None

    @property
    def op(self) -> OperatorRun:
        """The running operator."""
        assert self._op is not None, "no operator was started"
        return self._op

    @op.setter
    def op(self, run: OperatorRun) -> None:
        self._op = run

    @property
    def kubelet(self) -> RealKubelet:
        """The process kubelet (a test that asked for none has none)."""
        assert self._kubelet is not None, "this cluster runs no kubelet"
        return self._kubelet

    def start_operator(self, state: str = "state", **options: Any) -> OperatorRun:
        """An operator under the chart's identity, watching this test's namespaces."""
        options.setdefault("namespaces", tuple(self.namespaces.values()))
        routes = self._kubelet.resolve if self._kubelet is not None else None
        return OperatorRun(self.emu.kubeconfig, self.tmp / state, routes=routes, **options).start()

    def get(self, plural: str, name: str) -> JSON | None:
        """An object of the test's first namespace."""
        return self.emu.get(plural, self.namespace, name)

    def ready(self, name: str, generation: int = 1) -> JSON:
        """Wait for McpServer ``name`` Ready at ``generation`` (the pod's stderr on a timeout)."""
        try:
            return wait_for(
                f"McpServer {name} Ready at generation {generation}",
                lambda: ready_at(self.get("mcpservers", name), generation),
            )
        except AssertionError as exc:
            raise AssertionError(
                f"{exc}\npod stderr:\n{self.kubelet.logs(self.namespace, f'mcp-{name}')}"
            ) from None

    def template_hash(self, name: str = "mcp-notes") -> str:
        """The config-hash annotation of a Deployment's pod template."""
        dep = self.get("deployments", name)
        assert dep is not None
        return str(dep["spec"]["template"]["metadata"]["annotations"]["clawplane.dev/config-hash"])

    def child_writes(self) -> int:
        """The operator's writes to Deployments, Services and ConfigMaps of the test's namespace."""
        return sum(
            len(self.emu.writes(kind, self.namespace)) for kind in ("deployments", "services", "configmaps")
        )

    def condition(
        self, plural: str, name: str, ctype: str, *, status: str, reason: str | None = None
    ) -> JSON:
        """Wait until ``plural/name`` has condition ``ctype`` with this status (and reason); return it."""

        def found() -> JSON | None:
            for cond in ((self.get(plural, name) or {}).get("status") or {}).get("conditions") or []:
                if cond["type"] == ctype and cond["status"] == status and reason in (None, cond["reason"]):
                    return dict(cond)
            return None

        return wait_for(f"{plural}/{name} {ctype}={status} ({reason or 'any reason'})", found)

    def patch_spec(self, plural: str, name: str, spec: JSON) -> None:
        """Merge ``spec`` into the live object's spec and apply it."""
        obj = self.get(plural, name)
        assert obj is not None
        obj["spec"] = {**obj["spec"], **spec}
        self.emu.apply_object(obj)

    def stop(self) -> None:
        """Stop the operator, then the kubelet; a request RBAC refused the operator fails the test."""
        try:
            if self._op is not None:
                self._op.stop()
        finally:
            if self._kubelet is not None:
                self._kubelet.stop()
        refused = self.emu.audit.refused()
        assert not refused, f"the chart's RBAC refused the operator: {refused}"


@contextmanager
def real_operator_cluster(
    cluster: RealCluster,
    admin: Kube,
    tmp: Path,
    *,
    logical: tuple[str, ...] = ("demo",),
    start: bool = True,
    kubelet: bool = True,
) -> Iterator[RealOperatorCluster]:
    """Namespaces, a kubelet (unless ``kubelet=False``) and an operator (unless ``start=False``), stopped afterwards."""
    install_chart_identity(admin)
    c = RealOperatorCluster(cluster, admin, tmp, logical=logical, kubelet=kubelet)
    try:
        if start:
            c.op = c.start_operator()
        yield c
    finally:
        c.stop()
