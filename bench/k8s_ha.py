"""The HA parts of ``bench/k8s_bench.py`` (``--failover``, ``--sharded``), kept apart from its 500-CR run.

``--failover``: two elected operator processes against the emulator; the leader is killed
with SIGKILL, a change is applied at once, and the time until the standby has written it
(the Deployment's command) is taken, five times (a fresh standby joins after each round);
the median is printed with the lease settings (lease 4 s, renew 3 s, retry 0.5 s; with the
defaults 15/10/2 s a takeover waits up to 15 s instead of 4). Baseline in the same run: the same change
made while a leader is alive.

``--sharded``: N McpServers (default 2,000) across 20 namespaces, reconciled once by one
operator and once by two operators with ``--namespace-selector`` (10 namespaces each),
each against a fresh emulator: time until all are ``Programmed``, and each operator's CPU
time and peak memory, from which the sizing per 1,000 resources is printed.
Polling here is measurement, not synchronisation.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.k8s_bench import STATUS_WRITES, peak_rss_mb  # noqa: E402
from tests.integration.k8s.test_leader_election import Operator  # noqa: E402
from tests.k8s.emulator import EmulatorThread  # noqa: E402
from tests.k8s.operator_run import install_crds  # noqa: E402

LEASE, RENEW, RETRY = 4.0, 3.0, 0.5
"""Shorter than the defaults (15/10/2 s), for a quick bench; still roomy enough for a busy 2-core box."""
FAST_LEASE = ["--leader-elect-lease-duration", str(LEASE), "--leader-elect-renew-deadline", str(RENEW)]
FAST_LEASE += ["--leader-elect-retry-period", str(RETRY)]
SHARD_LABEL = "clawplane.dev/shard"
NAMESPACE_COUNT = 20
KOPF_STARTED = "Initial authentication has finished"


class Proc(Operator):
    """One operator process (the tests' ``Operator``: ``readyz``, ``output``), stoppable."""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _launch(emu: EmulatorThread, home: Path, token: str, *extra: str, metrics: bool = True) -> Proc:
    kubeconfig = emu.write_kubeconfig(home / "kubeconfig", token=token)
    port = _free_port() if metrics else 0
    cmd = [sys.executable, "-m", "clawplane", "k8s", "run", "-A", "--kubeconfig", str(kubeconfig)]
    cmd += ["--state-dir", str(home / "state"), "--skills-mount-path", str(home / "skills")]
    cmd += ["--metrics-port", str(port), "--health-port", "0", "--bridge-image", "example.org/clawplane:dev"]
    log = home / "operator.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([*cmd, *extra], stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    return Proc(token, proc, port, log)


def _until(what: str, probe: Any, timeout: float, every: float = 0.01) -> float:
    start = time.monotonic()
    while not probe():
        if time.monotonic() - start > timeout:
            raise SystemExit(f"k8s bench: timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)
    return time.monotonic() - start


def _server(ns: str, name: str, *args: str) -> dict[str, Any]:
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"transport": "stdio", "command": "uvx", "args": [name, *args]},
    }


def _command(emu: EmulatorThread, ns: str, name: str) -> list[str]:
    dep = emu.get("deployments", ns, f"mcp-{name}") or {}
    containers = ((dep.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or [{}]
    return list(containers[0].get("command") or [])


def _change_applied(emu: EmulatorThread, mark: str) -> Any:
    return lambda: mark in _command(emu, "default", "files")


def failover(tmp: Path, rounds: int = 5) -> None:
    """Print the median time from a kill -9 of the leader to the standby's write of a change."""
    takeovers: list[float] = []
    with EmulatorThread() as emu, ExitStack() as stack:
        install_crds(emu)
        started = 0

        def standby() -> Proc:
            nonlocal started
            started += 1
            op = _launch(emu, tmp / f"op-{started}", f"op-{started}", *FAST_LEASE)
            stack.callback(op.stop)
            return op

        leader = standby()
        _until("the first leader", lambda: leader.readyz() == "ready (leader)", 90)
        emu.apply_object(_server("default", "files", "--round-0"))
        _until("the first pass", _change_applied(emu, "--round-0"), 90)
        live = time.monotonic()
        emu.apply_object(_server("default", "files", "--live-leader"))
        _until("a change under a live leader", _change_applied(emu, "--live-leader"), 90)
        baseline = time.monotonic() - live
        for round_ in range(1, rounds + 1):
            waiting = standby()
            _until("a standby", lambda op=waiting: op.readyz() == "ready (standby)", 90)
            leader.proc.kill()
            cut = time.monotonic()
            emu.apply_object(_server("default", "files", f"--round-{round_}"))
            try:
                _until("the takeover", _change_applied(emu, f"--round-{round_}"), 90)
            except SystemExit:
                print(waiting.output()[-3000:], file=sys.stderr)
                raise
            takeovers.append(time.monotonic() - cut)
            leader.proc.wait(timeout=30)
            leader = waiting
            print(f"  round {round_}: change written {takeovers[-1]:.2f} s after the kill -9")
    median = statistics.median(takeovers)
    settings = f"lease {LEASE:g} s, renew {RENEW:g} s, retry {RETRY:g} s"
    print(f"failover ({settings}): median of {rounds} = {median:.2f} s")
    print(f"baseline: the same change under a live leader {baseline:.2f} s -> ratio {median / baseline:.1f}x")


def _programmed(emu: EmulatorThread, namespaces: list[str]) -> int:
    count = 0
    for ns in namespaces:
        try:
            objects = emu.list("mcpservers", ns)
        except TimeoutError:  # the emulator's loop is busy serving the operators: ask again later
            return 0
        for obj in objects:
            if any(
                c["type"] == "Programmed" and c["status"] == "True"
                for c in (obj.get("status") or {}).get("conditions") or []
            ):
                count += 1
    return count


def _fleet(tmp: Path, n: int, shards: int) -> dict[str, Any]:
    namespaces = [f"fleet-{i:02d}" for i in range(NAMESPACE_COUNT)]
    with EmulatorThread(namespaces=[]) as emu, ExitStack() as stack:
        install_crds(emu)
        for i, ns in enumerate(namespaces):
            shard = "ab"[i % 2] if shards == 2 else "a"
            emu.apply_object(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": ns, "labels": {SHARD_LABEL: shard}},
                }
            )
        ops = []
        for s in range(shards):
            extra = ["--no-leader-elect"]
            if shards > 1:
                extra += ["--namespace-selector", f"{SHARD_LABEL}={'ab'[s]}"]
            op = _launch(emu, tmp / f"fleet-{shards}-{s}", f"fleet-{s}", *extra, metrics=False)
            stack.callback(op.stop)
            ops.append(op)
        for op in ops:
            try:
                _until("kopf's start", lambda op=op: KOPF_STARTED in op.log.read_text(), 120)
            except SystemExit:
                print(op.log.read_text()[-3000:], file=sys.stderr)
                raise
        procs = [psutil.Process(op.proc.pid) for op in ops]
        cpu0 = [sum(p.cpu_times()[:2]) for p in procs]
        tally0 = emu.request_tally()
        start = time.monotonic()
        for i in range(n):
            emu.apply_object(_server(namespaces[i % NAMESPACE_COUNT], f"srv-{i:04d}"))

        def done() -> bool:
            # Listing every namespace is work for the emulator's thread: only once n statuses came.
            written = emu.request_tally()[STATUS_WRITES] - tally0[STATUS_WRITES]
            return written >= n and _programmed(emu, namespaces) >= n

        _until(f"{n} Programmed", done, 3600, every=0.5)
        seconds = time.monotonic() - start  # from the first apply
        cpu = [sum(p.cpu_times()[:2]) - c for p, c in zip(procs, cpu0, strict=True)]
        peak = [peak_rss_mb(op.proc.pid) for op in ops]
    return {"seconds": seconds, "cpu": cpu, "peak_mb": peak}


def sharded(tmp: Path, n: int = 2000) -> None:
    """Print one operator against two sharded ones on ``n`` McpServers across 20 namespaces."""
    one = _fleet(tmp / "one", n, 1)
    print(
        f"{n} McpServers in {NAMESPACE_COUNT} namespaces, one operator: "
        f"all Programmed after {one['seconds']:.1f} s"
    )
    print(f"  CPU {one['cpu'][0]:.1f} s, peak memory {one['peak_mb'][0]:.0f} MB")
    two = _fleet(tmp / "two", n, 2)
    print(f"two sharded operators (10 namespaces each): all Programmed after {two['seconds']:.1f} s")
    for s in range(2):
        print(f"  shard {'ab'[s]}: CPU {two['cpu'][s]:.1f} s, peak memory {two['peak_mb'][s]:.0f} MB")
    print(f"ratio (two shards / one operator): {two['seconds'] / one['seconds']:.2f}x wall time")
    # Memory: the peak of one operator holding n against a shard holding n/2 gives the cost per resource.
    per_resource = (one["peak_mb"][0] - max(two["peak_mb"])) / (n / 2)
    base = one["peak_mb"][0] - per_resource * n
    print(
        f"sizing per 1,000 McpServers: {one['cpu'][0] * 1000 / n:.1f} CPU-seconds to converge them, "
        f"{per_resource * 1000:.0f} MB of memory on top of a {base:.0f} MB base"
    )
