"""The operator's lists come in pages on a real API server, and every object arrives once.

2,000 ConfigMaps (plus the kube-root-ca.crt the controller manager publishes) through
``KubeApi.list``: five requests of ``limit=500`` following ``continue`` tokens, as the audit
log records them, and the watch starts from the list's resourceVersion.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from tests.k8s.real import audit
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import Kube

from clawplane.k8s.api.kubeapi import CONFIGMAPS, LIST_PAGE, KubeApi
from clawplane.k8s.api.kubeconfig import load_connection

COUNT = 2_000
pytestmark = pytest.mark.compat


def test_a_list_of_more_than_a_page_follows_continue_tokens(
    real_cluster: RealCluster, admin: Kube, namespace: str, tmp_path: Path
) -> None:
    def make(i: int) -> None:
        admin.create({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": f"cm-{i:04d}", "namespace": namespace}, "data": {"i": str(i)}})  # fmt: skip

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(make, range(COUNT)))
    config = real_cluster.write_kubeconfig(
        tmp_path / "kubeconfig", real_cluster.admin_token, "admin", namespace
    )
    offset = real_cluster.audit_log.stat().st_size

    async def listed() -> tuple[list[str], str]:
        api = KubeApi(load_connection(str(config)))
        try:
            items, version = await api.list_versioned(CONFIGMAPS, namespace)
        finally:
            await api.aclose()
        return [item["metadata"]["name"] for item in items], version

    names, version = anyio.run(listed)
    assert len(names) == len(set(names)) == COUNT + 1, len(names)
    assert {f"cm-{i:04d}" for i in range(COUNT)} <= set(names)
    assert int(version) > 0
    lists = [
        parse_qs(urlsplit(e["requestURI"]).query)
        for e in audit.events(real_cluster.audit_log, offset)
        if e["verb"] == "list" and (e.get("objectRef") or {}).get("resource") == "configmaps"
        and e.get("stage") == "ResponseComplete" and e["user"]["username"] == "admin"
    ]  # fmt: skip
    assert len(lists) == -(-(COUNT + 1) // LIST_PAGE), lists
    assert all(query["limit"] == [str(LIST_PAGE)] for query in lists), lists
    assert sum("continue" in query for query in lists) == len(lists) - 1, lists
