"""The operator's watches on the real API server: bookmarks move the resume point, 410 Gone relists.

``watch_forever`` (clawplane.k8s.objects.watches) lists, then watches from the list's version and resumes
each watch the server ends from the last version it saw. Bookmarks (which the API server's watch
cache sends shortly before a watch's timeout once its version has moved) advance that version while
nothing watched changes; the audit log shows the next watch starting there. A version etcd has
compacted away gets an ERROR event with code 410: the watch lists again and goes on. That needs a
control plane of its own: kube-apiserver with the ConfigMap watch cache off (so a watch reads etcd)
and a one-second compaction interval.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from tests.compat.conftest import require_oracle
from tests.k8s.operator_run import wait_for
from tests.k8s.real import audit
from tests.k8s.real.apiserver import RealCluster
from tests.oracles import locate

from clawplane.k8s.api.kubeapi import CONFIGMAPS, KubeApi
from clawplane.k8s.api.kubeconfig import load_connection
from clawplane.k8s.objects.watches import watch_forever

pytestmark = pytest.mark.compat
WATCH_TIMEOUT_S = 4


def _configmap(namespace: str, name: str, value: str = "0") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": {"v": value}}  # fmt: skip


def _requests(cluster: RealCluster, offset: int, namespace: str, verb: str) -> list[dict[str, list[str]]]:
    """The query of each ``verb`` request (list or watch) on ConfigMaps in ``namespace`` after ``offset``."""
    return [
        parse_qs(urlsplit(e["requestURI"]).query)
        for e in audit.events(cluster.audit_log, offset)
        if e["verb"] == verb and (e.get("objectRef") or {}).get("resource") == "configmaps"
        and (e.get("objectRef") or {}).get("namespace") == namespace
        and e.get("stage") == ("ResponseStarted" if verb == "watch" else "ResponseComplete")
    ]  # fmt: skip


class Watching:
    """``watch_forever`` on one namespace's ConfigMaps in a thread, recording what it hands on."""

    def __init__(self, api: KubeApi, namespace: str, **kwargs: Any) -> None:
        self.events: list[tuple[str, str]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.api = api
        self._kwargs, self._namespace = kwargs, namespace
        self._task = asyncio.run_coroutine_threadsafe(self._run(), self._loop)

    async def _run(self) -> None:
        await watch_forever(
            self.api, CONFIGMAPS, self._namespace,
            lambda kind, obj: self.events.append((kind, obj["metadata"]["name"])), **self._kwargs,
        )  # fmt: skip

    def stop(self) -> None:
        self._task.cancel()  # watch_forever only ends by cancellation; anything else it raised shows here
        with contextlib.suppress(concurrent.futures.CancelledError):
            self._task.result(30)
        asyncio.run_coroutine_threadsafe(self.api.aclose(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)


def test_bookmarks_move_the_resume_point_of_a_quiet_watch(real_cluster: RealCluster, tmp_path: Path) -> None:
    quiet, busy = real_cluster.new_namespace(), real_cluster.new_namespace()
    with real_cluster.admin() as kube:  # the controller manager publishes it; under load it can come late
        wait_for("kube-root-ca.crt in the quiet namespace", lambda: kube.get("v1", "ConfigMap", quiet, "kube-root-ca.crt"))
    config = real_cluster.write_kubeconfig(tmp_path / "kubeconfig", real_cluster.admin_token, "admin", quiet)
    offset = real_cluster.audit_log.stat().st_size
    watching = Watching(KubeApi(load_connection(str(config))), quiet, timeout_seconds=WATCH_TIMEOUT_S)
    stop = threading.Event()

    def churn() -> None:  # changes elsewhere move the watch cache's version, so bookmarks are sent
        with real_cluster.admin() as kube:
            n = 0
            while not stop.is_set():
                kube.create(_configmap(busy, f"c{n}"))
                n += 1
                stop.wait(0.2)

    churning = threading.Thread(target=churn)
    churning.start()
    try:
        watches = wait_for(
            "the quiet watch to be resumed twice",
            lambda: (w := _requests(real_cluster, offset, quiet, "watch")) and len(w) >= 3 and w,
            timeout=6 * WATCH_TIMEOUT_S,
        )
    finally:
        stop.set()
        churning.join(30)
        watching.stop()
    (listed,) = _requests(real_cluster, offset, quiet, "list")
    versions = [int(w["resourceVersion"][0]) for w in watches]
    assert all(w["allowWatchBookmarks"] == ["true"] for w in watches)
    # Nothing in the quiet namespace changed (only kube-root-ca.crt was listed), yet each resumed watch
    # starts later than the one before: only a bookmark can have told it the newer version.
    assert [kind for kind, _ in watching.events] == []
    assert versions == sorted(versions) and versions[0] < versions[1] < versions[2], versions
    assert "limit" in listed


@pytest.fixture
def compacting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealCluster]:
    """A control plane whose ConfigMap watches read etcd, compacted every second."""
    require_oracle("kubernetes")
    bins = locate.kubernetes_bins()
    assert bins is not None
    args = ("--watch-cache-sizes=configmaps#0", "--etcd-compaction-interval=1s")
    with RealCluster(tmp_path_factory.mktemp("compacting"), bins, apiserver_args=args) as cluster:
        yield cluster


class StaleFirstList(KubeApi):
    """The real API, except that the first list answers with a version taken earlier.

    As when an operator's list is older than the last compaction (a slow start, a long pause):
    the version is one the server really had; the test made it stale by changing and compacting.
    """

    def __init__(self, config: Path, stale: str) -> None:
        super().__init__(load_connection(str(config)))
        self.stale = stale

    async def list_versioned(self, *args: Any, **kwargs: Any) -> tuple[list[dict[str, Any]], str]:
        items, version = await super().list_versioned(*args, **kwargs)
        if self.stale:
            version, self.stale = self.stale, ""
        return items, version


def test_a_compacted_resume_point_is_a_410_and_the_watch_lists_again(compacting: RealCluster, tmp_path: Path) -> None:
    namespace = compacting.new_namespace()
    config = compacting.write_kubeconfig(tmp_path / "kubeconfig", compacting.admin_token, "admin", namespace)
    with compacting.admin() as kube:
        first = kube.create(_configmap(namespace, "a"))
        stale = first["metadata"]["resourceVersion"]
        for n in range(5):
            kube.apply(_configmap(namespace, "a", str(n + 1)))

    async def gone() -> bool:
        api = KubeApi(load_connection(str(config)))
        try:
            async for event in api.watch(CONFIGMAPS, namespace, resource_version=stale, timeout_seconds=2):
                return event["type"] == "ERROR" and event["object"].get("code") == 410
        finally:
            await api.aclose()
        return False

    wait_for("etcd to compact the first version away", lambda: anyio.run(gone), timeout=30)
    offset = compacting.audit_log.stat().st_size
    watching = Watching(StaleFirstList(config, stale), namespace)
    try:
        # The first watch (from the stale version) ends with 410; a second list and watch follow.
        wait_for("a second list after the 410", lambda: len(_requests(compacting, offset, namespace, "list")) >= 2)
        wait_for("the new watch", lambda: len(_requests(compacting, offset, namespace, "watch")) >= 2)
        with compacting.admin() as kube:
            kube.create(_configmap(namespace, "after-the-relist"))
        wait_for("the new object handed on", lambda: ("ADDED", "after-the-relist") in watching.events)
    finally:
        watching.stop()
    watches = _requests(compacting, offset, namespace, "watch")
    assert watches[0]["resourceVersion"] == [stale] and watches[1]["resourceVersion"] != [stale]
