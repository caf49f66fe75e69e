"""Operator benchmark: 500 McpServer resources applied at once against the API emulator.

Runs ``clawplane k8s run`` as a child process against the emulator (tests/k8s) and
reports the time until every server is ``Programmed=True`` (Deployment + Service written,
status posted), plus the operator's CPU time and peak memory (VmHWM). Baseline, in the
same run and against the same emulator: writing the same 500 Deployments and 500
Services directly over HTTP, the least any controller must do. The emulator runs no
pods, so the servers stay Starting; discovery is measured by bench/converge_bench.py.
Polling here is measurement, not synchronisation.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.k8s.emulator import EmulatorThread  # noqa: E402
from tests.k8s.operator_run import install_crds  # noqa: E402

from clawplane.k8s.children import Owner, server_deployment, server_service  # noqa: E402
from clawplane.models import McpServerSpec  # noqa: E402

NS = "bench"


def server(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": f"srv-{i:04d}", "namespace": NS},
        "spec": {"transport": "stdio", "command": "uvx", "args": [f"server-{i}"], "env": {"N": str(i)}},
    }


def programmed(emu: EmulatorThread) -> int:
    count = 0
    for obj in emu.list("mcpservers", NS):
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond["type"] == "Programmed" and cond["status"] == "True":
                count += 1
    return count


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_operator(emu: EmulatorThread, n: int, tmp: Path) -> dict[str, float]:
    assert emu.kubeconfig is not None
    cmd = [sys.executable, "-m", "clawplane", "k8s", "run", "-A", "--state-dir", str(tmp / "state")]
    cmd += ["--kubeconfig", str(emu.kubeconfig), "--metrics-port", "0", "--health-port", "0"]
    cmd += ["--skills-mount-path", str(tmp / "skills")]
    log = (tmp / "operator.log").open("w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    ps = psutil.Process(proc.pid)
    try:
        idle_deadline = time.monotonic() + 60
        while (
            "Starting the main handler" not in (tmp / "operator.log").read_text()
            and time.monotonic() < idle_deadline
        ):
            time.sleep(0.05)
        cpu0 = sum(ps.cpu_times()[:2])
        start = time.monotonic()
        for i in range(n):
            emu.apply_object(server(i))
        applied = time.monotonic() - start
        deadline = start + 600
        while programmed(emu) < n:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"operator did not program {n} servers; see {tmp / 'operator.log'}")
            time.sleep(0.05)
        elapsed = time.monotonic() - start
        cpu = sum(ps.cpu_times()[:2]) - cpu0
        return {"seconds": elapsed, "apply_seconds": applied, "cpu": cpu, "peak_mb": peak_rss_mb(proc.pid)}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        if os.environ.get("K8S_BENCH_KEEP_LOG"):
            print((tmp / "operator.log").read_text()[-20000:])


async def bare_writes(url: str, n: int) -> float:
    spec = McpServerSpec.model_validate({"transport": "stdio", "command": "uvx", "args": ["x"]})
    owner = Owner("McpServer", "x", "uid")
    start = time.monotonic()
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        sem = asyncio.Semaphore(8)

        async def one(i: int) -> None:
            async with sem:
                dep = server_deployment(
                    f"base-{i}", "baseline", spec, owner=owner, image="img", config_hash="h"
                )
                svc = server_service(f"base-{i}", "baseline", owner=owner)
                (
                    await client.post("/apis/apps/v1/namespaces/baseline/deployments", json=dep)
                ).raise_for_status()
                (await client.post("/api/v1/namespaces/baseline/services", json=svc)).raise_for_status()

        await asyncio.gather(*(one(i) for i in range(n)))
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=500)
    parser.add_argument("--failover", action="store_true", help="Leader failover time instead (k8s_ha.py).")
    parser.add_argument(
        "--sharded", type=int, metavar="N", help="N McpServers, 20 namespaces: two shards vs one (k8s_ha.py)."
    )
    args = parser.parse_args()
    os.environ.setdefault("NO_COLOR", "1")
    if args.failover or args.sharded:
        from bench import k8s_ha

        with tempfile.TemporaryDirectory(prefix="clawplane-k8s-ha-bench-") as ha_tmp:
            if args.failover:
                k8s_ha.failover(Path(ha_tmp))
            if args.sharded:
                k8s_ha.sharded(Path(ha_tmp), args.sharded)
        return
    with (
        tempfile.TemporaryDirectory(prefix="clawplane-k8s-bench-") as tmp,
        EmulatorThread(namespaces=[NS, "baseline"]) as emu,
    ):
        emu.write_kubeconfig(Path(tmp) / "kubeconfig")
        install_crds(emu)
        base = asyncio.run(bare_writes(emu.url, args.n))
        result = run_operator(emu, args.n, Path(tmp))
    print(
        f"{args.n} McpServers applied in {result['apply_seconds']:.2f} s (in-process writes to the emulator)"
    )
    print(f"all Programmed after        {result['seconds']:.2f} s")
    print(f"baseline: {2 * args.n} bare child writes {base:.2f} s  -> ratio {result['seconds'] / base:.1f}x")
    print(f"operator CPU time           {result['cpu']:.2f} s")
    print(f"operator peak memory        {result['peak_mb']:.0f} MB (VmHWM)")


if __name__ == "__main__":
    main()
