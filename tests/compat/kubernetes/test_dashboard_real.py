"""``clawplane k8s run --ui-port``: the dashboard of a namespace on the real API server, beside a folder's.

The same resources (two hosted servers, an Agent, a Gateway whose rules hold server
deletes) are applied to the real API server (their pods run by tests/k8s/real/kubelet.py) and
written to a folder watched by ``clawplane run``.
Both dashboards show the same resources with the same phases; deleting a server is held in
both for approval with the same summary; in the cluster the held delete keeps the resource
(and its Deployment) until the dashboard's answer, then it goes.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from ruamel.yaml import YAML
from tests.integration.engine.conftest import Cli, processes_under
from tests.integration.runloop.conftest import Loop, wait_for
from tests.integration.ui.conftest import csrf_of
from tests.k8s.dashboard_run import OBJECTS, READER_TOKEN, TOKEN, WAIT_S, dashboard_options
from tests.k8s.operator_run import OperatorRun
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube
from tests.k8s.real.kubelet import RealKubelet

API = "clawplane.dev/v1alpha1"
pytestmark = pytest.mark.compat


class Board:
    """A logged-in client of one dashboard."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base.removesuffix("/ui")
        self.client = httpx.Client(base_url=self.base, headers={"Origin": self.base}, timeout=30)
        answer = self.client.post("/ui/login", data={"token": token})
        assert answer.status_code == 303, answer.text

    def resources(self) -> dict[str, str]:
        """``Kind/name`` → phase, as the overview shows them."""
        page = self.client.get("/ui").text
        return dict(re.findall(r'data-phase-of="([^"]+)">([^<]*)<', page))

    def pending(self) -> list[tuple[str, str]]:
        """(id, summary) of each pending approval."""
        page = self.client.get("/ui/approvals").text.split("<h2>Answered")[0]
        return re.findall(r'<section class="approval" id="approval-([^"]+)"[^>]*>\s*<h3[^>]*>([^<]+)</h3>', page)

    def answer(self, approval: str, decision: str, reason: str) -> httpx.Response:
        csrf = csrf_of(self.client.get("/ui/approvals").text)
        return self.client.post(
            f"/ui/approvals/{approval}", data={"csrf": csrf, "decision": decision, "reason": reason}
        )


def _settled(board: Board, want: dict[str, str]) -> dict[str, str] | None:
    found = board.resources()
    return found if found == want else None


@pytest.fixture
def board(real_cluster: RealCluster, namespace: str, tmp_path: Path) -> Iterator[str]:
    """A kubelet and an operator serving the test namespace's dashboard; its URL."""
    options, urls = dashboard_options(namespace, tmp_path)
    kubelet = RealKubelet(real_cluster.admin(), tmp_path / "pods", (namespace,)).start()
    config = real_cluster.write_kubeconfig(tmp_path / "operator.kubeconfig", real_cluster.admin_token, "admin")
    try:
        run = OperatorRun(
            config, tmp_path / "state", routes=kubelet.resolve, namespaces=(namespace,), dashboard=options
        ).start()
        try:
            yield wait_for("the dashboard to listen", lambda: urls[0] if urls else None, timeout=WAIT_S)
        finally:
            run.stop()
    finally:
        kubelet.stop()


@contextlib.contextmanager
def _local_folder(tmp_path: Path) -> Iterator[tuple[Loop, str, str]]:
    folder = tmp_path / "folder"
    folder.mkdir()
    yaml = YAML()
    for obj in OBJECTS:
        with (folder / f"{obj['metadata']['name']}-{obj['kind'].lower()}.yaml").open("w") as out:
            yaml.dump(obj, out)
    cli = Cli(folder)
    loop = Loop(folder, cli)
    try:
        started = cli("run", str(folder), "--detach", "--resync-interval", "2")
        assert started.returncode == 0, started.stdout + started.stderr
        loop.wait_settled(timeout=WAIT_S)
        token = cli("token", "show", str(folder), "cli").stdout.strip()
        yield loop, str(loop.info()["endpoint"]) + "/ui", token
    finally:
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()


def test_the_namespace_dashboard_shows_what_the_folder_dashboard_shows(
    board: str, admin: Kube, namespace: str, tmp_path: Path
) -> None:
    url = board
    for obj in OBJECTS:
        admin.apply({**obj, "metadata": {**obj["metadata"], "namespace": namespace}})
    want = {f"{o['kind']}/{o['metadata']['name']}": "Ready" for o in OBJECTS}
    cluster = Board(url, TOKEN)
    with _local_folder(tmp_path) as (loop, local_url, local_token):
        local = Board(local_url, local_token)
        assert wait_for("the folder's dashboard to show every resource Ready", lambda: _settled(local, want), timeout=WAIT_S)
        assert wait_for("the namespace's dashboard to show every resource Ready", lambda: _settled(cluster, want), timeout=WAIT_S)
        agent = cluster.client.get("/ui/agents/bot").text
        assert "notes__" in agent and "other__" in agent  # the merged tool catalog of both servers
        overview = cluster.client.get("/ui").text
        assert f"Namespace {namespace}" in overview and re.search(r'id="last-reconcile">applied at \d{4}-', overview)
        # Traffic: the folder's supervisor carries the calls and charts them; a namespace's go
        # through its bridge pods, and its pages say so where the folder's draw charts.
        local_agent = local.client.get("/ui/agents/bot").text
        assert 'id="traffic-summary"' in local_agent and "<svg" in local_agent
        assert 'class="sparkline"' in local.client.get("/ui").text
        for page in (agent, overview, cluster.client.get("/ui/servers/notes").text):
            assert 'id="traffic-note"' in page and "<svg" not in page

        # Deleting a server is held in both, with the same summary.
        (loop.folder / "other-mcpserver.yaml").unlink()
        admin.delete(API, "McpServer", namespace, "other")
        local_held = wait_for("a held delete in the folder", local.pending, timeout=WAIT_S)
        cluster_held = wait_for("a held delete in the namespace", cluster.pending, timeout=WAIT_S)
        assert [s for _, s in local_held] == [s for _, s in cluster_held] == ["plan: delete McpServer/other"]
        plan = cluster.client.get("/ui/plan").text
        assert 'data-key="McpServer/other"' in plan and "server-deletes" in plan.split('id="plan-held"')[1]
        # Held: the resource keeps its finalizer and what it owns.
        obj = admin.get(API, "McpServer", namespace, "other")
        assert obj is not None and obj["metadata"].get("deletionTimestamp")
        assert admin.get("apps/v1", "Deployment", namespace, "mcp-other") is not None
        assert cluster.resources() == local.resources() == want

        # A reader may look, not answer.
        reader = Board(url, READER_TOKEN)
        refused = reader.answer(cluster_held[0][0], "approve", "")
        assert refused.status_code == 403 and "no approve scope" in refused.text

        assert cluster.answer(cluster_held[0][0], "approve", "retired").status_code == 303
        wait_for("McpServer other gone", lambda: admin.get(API, "McpServer", namespace, "other") is None, timeout=WAIT_S)
        wait_for("its Deployment collected", lambda: admin.get("apps/v1", "Deployment", namespace, "mcp-other") is None,
                 timeout=WAIT_S)  # fmt: skip
        gone = {k: v for k, v in want.items() if k != "McpServer/other"}
        assert wait_for("the namespace's dashboard to drop it", lambda: _settled(cluster, gone), timeout=WAIT_S)
        assert local.answer(local_held[0][0], "approve", "retired").status_code == 303
        assert wait_for("the folder's dashboard to drop it", lambda: _settled(local, gone), timeout=WAIT_S)
        audit = cluster.client.get("/ui/audit").text
        assert "ui:dashboard" in audit and "approval-approved" in audit


def test_the_namespace_dashboard_refuses_strangers(board: str) -> None:
    url = board
    base = url.removesuffix("/ui")
    with httpx.Client(base_url=base, timeout=30) as client:
        assert client.get("/ui").status_code == 401
        wrong = client.post("/ui/login", data={"token": "x" * 40}, headers={"Origin": base})
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
        foreign = client.post("/ui/login", data={"token": TOKEN}, headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403 and "set-cookie" not in foreign.headers
        assert client.get("/ui", headers={"Host": "evil.example"}).status_code == 421
        assert client.get("/metrics").status_code == 404
        big = client.post("/ui/login", content=b"token=" + b"x" * 70_000, headers={
            "Origin": base, "content-type": "application/x-www-form-urlencoded"})
        assert big.status_code == 413
