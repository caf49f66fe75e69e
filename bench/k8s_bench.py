"""Operator benchmark: 500 McpServer resources applied at once against the API emulator.

``--real`` runs the same against a real kube-apiserver + etcd (tests/k8s/real, built by
tests/oracles/install.sh): the operator under a ServiceAccount bound to cluster-admin, the
baseline with the admin token, the request tally from the API server's audit log.

Runs ``clawplane k8s run`` as a child process against the emulator (tests/k8s) and
reports the time until every server is ``Programmed=True`` (its children written, status
posted), plus the operator's CPU time, peak memory (VmHWM), the API requests it made by verb
and when its Events (posted in the background) were all in. Baseline, in the same run and
against the same emulator: writing the same children directly over HTTP (per server a token
Secret, a Deployment, a Service and a NetworkPolicy, as the operator writes them), the least
any controller must do; the ratio against the Deployment + Service pair alone is printed
too. The emulator runs no pods, so the servers stay Starting; discovery is measured by
bench/converge_bench.py. Polling here is measurement, not synchronisation.

``K8S_BENCH_OPERATOR_ARGS`` adds arguments to ``clawplane k8s run`` (e.g. ``--no-leader-elect``);
``K8S_BENCH_KEEP_LOG=PATH`` keeps the operator's log there.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.k8s.emulator import EmulatorThread  # noqa: E402
from tests.k8s.operator_run import install_crds  # noqa: E402

from clawplane.k8s.objects.children import (  # noqa: E402
    Owner,
    server_deployment,
    server_network_policy,
    server_service,
    server_token_secret,
)
from clawplane.k8s.options import default_ingress  # noqa: E402
from clawplane.models import McpServerSpec  # noqa: E402

NS = "bench"
EVENTS_PER_SERVER = 4
"""A "Created" Event per child: Secret, Deployment, Service, NetworkPolicy."""


def server(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": f"srv-{i:04d}", "namespace": NS},
        "spec": {"transport": "stdio", "command": "uvx", "args": [f"server-{i}"], "env": {"N": str(i)}},
    }


def programmed(emu: EmulatorThread, namespace: str = NS) -> int:
    """How many servers of the namespace are ``Programmed=True``."""
    count = 0
    for obj in emu.list("mcpservers", namespace):
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond["type"] == "Programmed" and cond["status"] == "True":
                count += 1
    return count


STATUS_WRITES = ("patch", "mcpservers", "status")


def all_programmed(
    emu: EmulatorThread, n: int, tally0: Counter[tuple[str, str, str | None]], namespaces: list[str]
) -> bool:
    """All ``n`` servers Programmed; listed only once ``n`` status writes came (a cheap count).

    Listing hundreds of servers every few milliseconds would load the emulator the operator is
    measured against (and that the baseline has to itself).
    """
    if emu.request_tally()[STATUS_WRITES] - tally0[STATUS_WRITES] < n:
        return False
    return sum(programmed(emu, ns) for ns in namespaces) >= n


def events_posted(emu: EmulatorThread) -> int:
    return len(emu.list("events.events.k8s.io", NS))


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_operator(emu: EmulatorThread, n: int, tmp: Path) -> dict[str, Any]:
    assert emu.kubeconfig is not None
    cmd = [sys.executable, "-m", "clawplane", "k8s", "run", "-A", "--state-dir", str(tmp / "state")]
    cmd += ["--kubeconfig", str(emu.kubeconfig), "--metrics-port", "0", "--health-port", "0"]
    cmd += ["--skills-mount-path", str(tmp / "skills")]
    cmd += os.environ.get("K8S_BENCH_OPERATOR_ARGS", "").split()
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
        tally0 = emu.request_tally()
        start = time.monotonic()
        for i in range(n):
            emu.apply_object(server(i))
        applied = time.monotonic() - start
        deadline = start + 600
        while not all_programmed(emu, n, tally0, [NS]):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"operator did not program {n} servers; see {tmp / 'operator.log'}")
            time.sleep(0.05)
        elapsed = time.monotonic() - start
        cpu = sum(ps.cpu_times()[:2]) - cpu0
        calls = emu.request_tally() - tally0
        events_at_programmed = events_posted(emu)
        while events_posted(emu) < EVENTS_PER_SERVER * n and time.monotonic() < deadline:
            time.sleep(0.05)
        return {
            "events_seconds": time.monotonic() - start,
            "events_at_programmed": events_at_programmed,
            "seconds": elapsed,
            "apply_seconds": applied,
            "cpu": cpu,
            "peak_mb": peak_rss_mb(proc.pid),
            "calls": calls,
        }
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        if os.environ.get("K8S_BENCH_KEEP_LOG"):
            Path(os.environ["K8S_BENCH_KEEP_LOG"]).write_text((tmp / "operator.log").read_text())


def print_calls(what: str, calls: Counter[tuple[str, str, str | None]], n: int) -> None:
    """The requests made until all were Programmed, by verb and resource, most first."""
    total = sum(calls.values())
    print(f"{what} until all Programmed: {total} ({total / n:.2f} per CR)")
    for (verb, plural, sub), count in sorted(calls.items(), key=lambda kv: -kv[1]):
        print(f"  {verb:>14} {plural + ('/' + sub if sub else ''):<24} {count:6d}  {count / n:5.2f}/CR")


async def bare_writes(
    url: str,
    n: int,
    namespace: str,
    *,
    all_children: bool,
    token: str | None = None,
    verify: str | bool = True,
) -> float:
    """Write each server's children directly; ``all_children``: all four, else Deployment + Service."""
    spec = McpServerSpec.model_validate({"transport": "stdio", "command": "uvx", "args": ["x"]})
    owner = Owner("McpServer", "x", "uid")
    peers = default_ingress()
    start = time.monotonic()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(base_url=url, timeout=60, headers=headers, verify=verify) as client:
        sem = asyncio.Semaphore(8)

        async def one(i: int) -> None:
            name = f"base-{i}"
            writes = [
                (
                    f"/apis/apps/v1/namespaces/{namespace}/deployments",
                    server_deployment(name, namespace, spec, owner=owner, image="img", config_hash="h"),
                ),
                (f"/api/v1/namespaces/{namespace}/services", server_service(name, namespace, owner=owner)),
            ]
            if all_children:
                secret = server_token_secret(name, namespace, "t" * 43, owner=owner)
                policy = server_network_policy(name, namespace, peers, owner=owner)
                writes.insert(0, (f"/api/v1/namespaces/{namespace}/secrets", secret))
                writes.append((f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies", policy))
            async with sem:
                for path, body in writes:
                    (await client.post(path, json=body)).raise_for_status()

        await asyncio.gather(*(one(i) for i in range(n)))
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=500)
    parser.add_argument("--real", action="store_true", help="Against a real kube-apiserver + etcd.")
    parser.add_argument("--failover", action="store_true", help="Leader failover time instead (k8s_ha.py).")
    parser.add_argument(
        "--sharded", type=int, metavar="N", help="N McpServers, 20 namespaces: two shards vs one (k8s_ha.py)."
    )
    args = parser.parse_args()
    os.environ.setdefault("NO_COLOR", "1")
    if args.real:
        from bench import k8s_real

        k8s_real.main(args.n)
        return
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
        EmulatorThread(namespaces=[NS, "warmup", "baseline", "pairs"]) as emu,
    ):
        emu.write_kubeconfig(Path(tmp) / "kubeconfig")
        install_crds(emu)
        # Warm the emulator first (each kind's validators are built on its first write), so neither
        # baseline pays for that and the ratios compare like with like.
        asyncio.run(bare_writes(emu.url, 20, "warmup", all_children=True))
        base = asyncio.run(bare_writes(emu.url, args.n, "baseline", all_children=True))
        pairs = asyncio.run(bare_writes(emu.url, args.n, "pairs", all_children=False))
        result = run_operator(emu, args.n, Path(tmp))
    print(
        f"{args.n} McpServers applied in {result['apply_seconds']:.2f} s (in-process writes to the emulator)"
    )
    print(f"all Programmed after        {result['seconds']:.2f} s")
    print(f"baseline: {4 * args.n} bare child writes {base:.2f} s  -> ratio {result['seconds'] / base:.2f}x")
    print(
        f"  (Deployment + Service only: {2 * args.n} writes {pairs:.2f} s"
        f" -> {result['seconds'] / pairs:.2f}x)"
    )
    print(
        f"Events: {result['events_at_programmed']} posted by then, "
        f"all {EVENTS_PER_SERVER * args.n} after {result['events_seconds']:.2f} s"
    )
    print(f"operator CPU time           {result['cpu']:.2f} s")
    print(f"operator peak memory        {result['peak_mb']:.0f} MB (VmHWM)")
    print_calls("API requests", result["calls"], args.n)


if __name__ == "__main__":
    main()
