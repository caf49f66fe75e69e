"""bench/k8s_bench.py --real: 500 McpServers to Programmed on a real kube-apiserver + etcd.

The same measurement as against the emulator, on the real control plane of tests/k8s/real:
the baseline writes the same children directly (admin token, 8 at a time), then the operator
(``clawplane k8s run -A`` as a child process, authenticated as a ServiceAccount bound to
cluster-admin so the audit log tells its requests apart) programs the servers. Polling the
API here is measurement, not synchronisation: the servers' progress is followed through one
watch, as cheap for the API server as it can be (polling lists of 500 servers four times a
second cost the API server, on the same two cores, more than the operator's own requests).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psutil
from bench.k8s_bench import EVENTS_PER_SERVER, NS, ROOT, bare_writes, peak_rss_mb, print_calls, server
from ruamel.yaml import YAML
from tests.k8s.real.apiserver import RealCluster
from tests.k8s.real.client import ApiError, Kube
from tests.oracles import locate

OPERATOR = ("bench", "operator")


def _programmed(kube: Kube, namespace: str) -> int:
    count = 0
    for obj in kube.list("clawplane.dev/v1alpha1", "McpServer", namespace):
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond["type"] == "Programmed" and cond["status"] == "True":
                count += 1
    return count


def _install(cluster: RealCluster) -> None:
    with cluster.admin() as kube:
        for path in sorted((ROOT / "manifests" / "crds").glob("*.yaml")):
            kube.apply(YAML(typ="safe").load(path), manager="bench")
        for ns in (NS, "warmup", "baseline", "pairs"):
            kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        kube.create({"apiVersion": "v1", "kind": "ServiceAccount",
                     "metadata": {"name": OPERATOR[1], "namespace": OPERATOR[0]}})  # fmt: skip
        kube.create({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "bench-operator"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": OPERATOR[1], "namespace": OPERATOR[0]}],
        })  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                kube.list("clawplane.dev/v1alpha1", "McpServer", NS)
                return
            except (KeyError, ApiError):  # not served yet, or its storage still initializing (429)
                time.sleep(0.25)
        raise SystemExit("the CRDs were not served within 60 s")


def _is_programmed(obj: dict[str, Any]) -> bool:
    return any(c["type"] == "Programmed" and c["status"] == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])  # fmt: skip


def _wait_programmed(kube: Kube, n: int, deadline: float, proc: subprocess.Popen[bytes]) -> None:
    """Follow the namespace's McpServers through a watch until ``n`` are Programmed."""
    done: set[str] = set()
    path = kube.path("clawplane.dev/v1alpha1", "McpServer", NS)
    version = "0"  # from the cache: every current object first, then changes
    while len(done) < n:
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit(f"the operator did not program {n} servers ({len(done)} were)")
        params = {"watch": "1", "resourceVersion": version, "timeoutSeconds": "5"}
        with kube.http.stream("GET", path, params=params, timeout=None) as resp:
            for line in resp.iter_lines():
                event = json.loads(line)
                obj = event["object"]
                if event["type"] == "ERROR":  # 410 Gone: start over from the cache
                    version = "0"
                    break
                version = obj["metadata"]["resourceVersion"]
                if _is_programmed(obj):
                    done.add(obj["metadata"]["name"])
                if len(done) >= n:
                    return


def _cpu(cluster: RealCluster) -> dict[str, float]:
    """CPU seconds so far of the API server and etcd (who uses the two cores)."""
    used = {}
    for name in ("kube-apiserver", "etcd"):
        times = psutil.Process(cluster.pid(name)).cpu_times()
        used[name] = times.user + times.system
    return used


def _tally(cluster: RealCluster, offset: int, user: str) -> Counter[tuple[str, str, str | None]]:
    calls: Counter[tuple[str, str, str | None]] = Counter()
    with cluster.audit_log.open("rb") as log:
        log.seek(offset)
        for line in log.read().splitlines():
            event = json.loads(line)
            ref = event.get("objectRef") or {}
            if event["user"]["username"] == user and event.get("stage") == "ResponseComplete":
                calls[(event["verb"], ref.get("resource", "?"), ref.get("subresource"))] += 1
    return calls


def _operator(cluster: RealCluster, n: int, tmp: Path) -> dict[str, Any]:
    token = cluster.service_account_token(*OPERATOR)
    config = cluster.write_kubeconfig(tmp / "operator.kubeconfig", token, "operator")
    cmd = [sys.executable, "-m", "clawplane", "k8s", "run", "-A", "--state-dir", str(tmp / "state")]
    cmd += ["--kubeconfig", str(config), "--metrics-port", "0", "--health-port", "0"]
    cmd += [
        "--skills-mount-path",
        str(tmp / "skills"),
        *os.environ.get("K8S_BENCH_OPERATOR_ARGS", "").split(),
    ]
    log_path = tmp / "operator.log"
    user = f"system:serviceaccount:{OPERATOR[0]}:{OPERATOR[1]}"
    with log_path.open("w") as log, cluster.admin() as kube:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            deadline = time.monotonic() + 60
            while "Starting the main handler" not in log_path.read_text() and time.monotonic() < deadline:
                time.sleep(0.05)
            offset = cluster.audit_log.stat().st_size
            start = time.monotonic()
            # 8 at a time, as the baseline writes: applying one by one would be the bottleneck.
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda i: kube.apply(server(i)), range(n)))
            applied = time.monotonic() - start
            _wait_programmed(kube, n, start + 900, proc)
            elapsed = time.monotonic() - start
            times = psutil.Process(proc.pid).cpu_times()
            cpu = times.user + times.system
            assert _programmed(kube, NS) == n
            events = len(kube.list("events.k8s.io/v1", "Event", NS))
            return {"seconds": elapsed, "apply_seconds": applied, "peak_mb": peak_rss_mb(proc.pid),
                    "events": events, "calls": _tally(cluster, offset, user), "cpu": cpu}  # fmt: skip
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            if os.environ.get("K8S_BENCH_KEEP_LOG"):
                Path(os.environ["K8S_BENCH_KEEP_LOG"]).write_text(log_path.read_text())


def main(n: int) -> None:
    """Run both measurements and print the ratio."""
    bins = locate.kubernetes_bins()
    if bins is None:
        raise SystemExit(f"no real control plane: {locate.unavailable_reason('kubernetes')}")
    with (
        tempfile.TemporaryDirectory(prefix="clawplane-k8s-real-bench-") as tmp,
        RealCluster(Path(tmp) / "cluster", bins) as cluster,
    ):
        _install(cluster)
        auth: dict[str, Any] = {"token": cluster.admin_token, "verify": str(cluster.ca)}
        asyncio.run(bare_writes(cluster.url, 20, "warmup", all_children=True, **auth))
        before = _cpu(cluster)
        base = asyncio.run(bare_writes(cluster.url, n, "baseline", all_children=True, **auth))
        base_cpu = {k: v - before[k] for k, v in _cpu(cluster).items()}
        pairs = asyncio.run(bare_writes(cluster.url, n, "pairs", all_children=False, **auth))
        before = _cpu(cluster)
        result = _operator(cluster, n, Path(tmp))
        op_cpu = {k: v - before[k] for k, v in _cpu(cluster).items()}
    print(f"real kube-apiserver {locate.pins()['KUBERNETES_VERSION']} + etcd {locate.pins()['ETCD_VERSION']}")
    print(f"{n} McpServers applied in {result['apply_seconds']:.2f} s (server-side apply, 8 at a time)")
    print(f"all Programmed after        {result['seconds']:.2f} s")
    ratio = result["seconds"] / base
    print(f"baseline: {4 * n} bare child writes {base:.2f} s  -> ratio {ratio:.2f}x (target <= 2x)")
    print(f"  (Deployment + Service only: {2 * n} writes {pairs:.2f} s -> {result['seconds'] / pairs:.2f}x)")
    print(f"Events by then: {result['events']} of {EVENTS_PER_SERVER * n}")
    print(f"operator peak memory        {result['peak_mb']:.0f} MB (VmHWM), CPU {result['cpu']:.2f} s")
    for name in ("kube-apiserver", "etcd"):
        print(f"{name} CPU: baseline {base_cpu[name]:.2f} s, operator run {op_cpu[name]:.2f} s")
    print_calls("operator API requests", result["calls"], n)
