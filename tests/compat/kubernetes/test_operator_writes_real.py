"""What creating McpServers costs the API server, counted in writes (a regression catch without timing).

Each new server needs its four children (token Secret, Deployment, Service, NetworkPolicy),
a "Created" Event for each, one status write and kopf's finalizer: ten writes. Anything
beyond that (a diff-base annotation, a status written twice, a child written back) makes every
large apply slower, and bench/k8s_bench.py would only show it as a ratio on a loaded machine.
No kubelet runs here: the servers stay Starting, which is Programmed (children written).

On the real API server: the operator runs under the chart's identity and its requests are
counted from the API server's audit log (tests/k8s/real/audit.py), which tells them from the
test's own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.k8s.cluster import NS
from tests.k8s.operator_run import is_true, until
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube
from tests.k8s.real.operator_cluster import RealApi, RealOperatorCluster, real_operator_cluster

from clawplane.models import KINDS

SERVERS = 20
CHILDREN = ("secrets", "deployments", "services", "networkpolicies")
CHILD_READS = (*CHILDREN, "configmaps", "pods")
CR_PLURALS = tuple(cls.PLURAL for cls in KINDS.values())
WRITES_PER_SERVER = {
    **{("POST", kind, None): 1 for kind in CHILDREN},
    ("POST", "events", None): len(CHILDREN),
    ("PATCH", "mcpservers", "status"): 1,
    ("PATCH", "mcpservers", None): 1,  # kopf's finalizer
}


def plain_server(i: int) -> dict[str, object]:
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": f"srv-{i:02d}", "namespace": NS},
        "spec": {"transport": "stdio", "command": "uvx", "args": [f"server-{i}"], "env": {"N": str(i)}},
    }


pytestmark = pytest.mark.compat


@pytest.fixture
def cluster(real_cluster: RealCluster, admin: Kube, tmp_path: Path) -> Iterator[RealOperatorCluster]:
    with real_operator_cluster(real_cluster, admin, tmp_path, kubelet=False) as c:
        yield c


def _create_and_settle(emulator: RealApi) -> None:
    """Create the servers and wait until all are Programmed and every child's Event is posted."""
    for i in range(SERVERS):
        emulator.apply_object(plain_server(i))
    until(
        emulator,
        f"all {SERVERS} McpServers Programmed",
        lambda: sum(is_true(o, "Programmed") for o in emulator.list("mcpservers", NS)) == SERVERS,
    )
    until(  # Events are posted in the background, after the statuses
        emulator,
        "every child's Created Event",
        lambda: len(emulator.list("events.events.k8s.io", NS)) >= SERVERS * len(CHILDREN),
    )


def test_creating_servers_costs_ten_writes_each_and_a_settled_pass_none(cluster: RealOperatorCluster) -> None:
    emulator, operator = cluster.emu, cluster.op
    emulator.clear_writes()
    _create_and_settle(emulator)
    settled = operator.passes()
    writes = emulator.write_tally()
    budget = Counter({key: SERVERS * count for key, count in WRITES_PER_SERVER.items()})
    assert writes - budget == Counter(), f"writes beyond the budget: {writes - budget} (all: {writes})"
    assert all(writes[("POST", kind, None)] == SERVERS for kind in CHILDREN), writes

    operator.wait_pass(settled)  # the servers are not ready, so passes keep coming: they must write nothing
    assert emulator.write_tally() == writes


def test_a_settled_pass_reads_the_children_from_the_watches_not_the_api(cluster: RealOperatorCluster) -> None:
    """Per pass, only the custom resources are listed: children and pods come from the watches' cache.

    Listing the six child kinds every pass sent every child of the namespace over the wire and
    through the JSON parser again, settled or not: with 500 servers, thousands of objects a pass.
    """
    emulator, operator = cluster.emu, cluster.op
    _create_and_settle(emulator)
    before = emulator.request_tally()
    settled = operator.passes()
    after = operator.wait_pass(settled)  # unready servers: passes keep coming (with backoff)
    during = emulator.request_tally() - before
    # A pass that began before ``before`` may still end in the window: allow one more pass's lists.
    passes = after - settled + 1
    child_reads = {k: v for k, v in during.items() if k[1] in CHILD_READS and k[0] in ("list", "get")}
    assert child_reads == {}, f"a settled pass read children from the API: {child_reads} (all: {during})"
    cr_lists = sum(v for k, v in during.items() if k[0] == "list" and k[1] in CR_PLURALS)
    assert cr_lists <= len(CR_PLURALS) * passes, during
    others = {k: v for k, v in during.items() if k[1] not in CR_PLURALS and k[0] != "watch"}
    assert others == {}, f"a settled pass made other requests: {others}"
