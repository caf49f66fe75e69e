"""Two ``clawplane k8s run`` processes against the emulator: one Lease, one writer.

Short durations (lease 5 s, renew deadline 3.5 s, retry 0.5 s) keep the takeovers quick while a
leader on a machine running two suites side by side still renews in time (with 2 s / 1.5 s a
healthy leader under that load missed its deadline and stepped down). Each
process authenticates with a token of its own, which the emulator's write log records, so every
write is attributed to the process that sent it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.k8s.emulator import EmulatorThread
from tests.k8s.operator_run import ROOT, install_crds, is_true, until, wait_for
from tests.k8s.wire import WriteRecord

LEASE = ("leases", "default", "clawplane-operator")
LEASE_S, RENEW_S, RETRY_S = 5.0, 3.5, 0.5
FAST = ("--leader-elect-lease-duration", f"{LEASE_S:g}", "--leader-elect-renew-deadline", f"{RENEW_S:g}")
SCHEDULING_SLACK_S = 3.0
"""How late a busy machine may run a process's next retry or shutdown step."""
METRICS_TOKEN = "leader-election-metrics-token"
STARTUP_TIMEOUT = 60.0
"""kopf's start and the first pass take a few seconds; a busy 2-core machine needs headroom."""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Operator:
    """One operator process with its own token, metrics port and state dir."""

    token: str
    proc: subprocess.Popen[bytes]
    metrics: int
    log: Path
    exit_code: int | None = field(default=None)

    def readyz(self) -> str:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/readyz", timeout=5) as resp:
                return str(resp.read().decode()).strip()
        except OSError:
            return ""

    def metric(self) -> str:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.metrics}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
        )
        with urllib.request.urlopen(request, timeout=5) as resp:
            text = str(resp.read().decode())
        return next(line for line in text.splitlines() if line.startswith("clawplane_leader "))

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture
def start(emulator: EmulatorThread, tmp_path: Path) -> Iterator[Any]:
    """Start operator processes (``start(token, *extra_args)``); every one still running is killed at the end."""
    install_crds(emulator)
    started: list[Operator] = []

    def launch(token: str, *extra: str) -> Operator:
        home = tmp_path / token
        kubeconfig = emulator.write_kubeconfig(home / "kubeconfig", token=token)
        metrics = free_port()
        cmd = [sys.executable, "-m", "clawplane", "k8s", "run", "-A", "--kubeconfig", str(kubeconfig)]
        cmd += ["--state-dir", str(home / "state"), "--skills-mount-path", str(home / "skills")]
        cmd += ["--metrics-port", str(metrics), "--health-port", "0", "--log-format", "json"]
        token_file = home / "metrics-token"
        token_file.parent.mkdir(parents=True, exist_ok=True)
        token_file.write_text(METRICS_TOKEN)
        cmd += ["--metrics-token-file", str(token_file)]
        cmd += ["--bridge-image", "example.org/clawplane:dev", "--leader-elect-retry-period", f"{RETRY_S:g}"]
        log = home / "operator.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([*cmd, *extra], stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        op = Operator(token, proc, metrics, log)
        started.append(op)
        return op

    yield launch
    for op in started:
        if op.proc.poll() is None:
            op.proc.kill()
        op.proc.wait(timeout=30)


def holder(emulator: EmulatorThread) -> str:
    lease = emulator.get(*LEASE) or {}
    return str((lease.get("spec") or {}).get("holderIdentity") or "")


def writes_by(emulator: EmulatorThread, token: str, *, lease: bool = False) -> list[WriteRecord]:
    """The writes of one process (its Lease writes only when ``lease``)."""
    return [w for w in emulator.write_log() if w.user == token and (w.plural == "leases") == lease]


def server(name: str, args: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"transport": "stdio", "command": "npx", "args": args},
    }


def deployment_args(emulator: EmulatorThread, name: str) -> list[str] | None:
    dep = emulator.get("deployments", "default", f"mcp-{name}")
    if dep is None:
        return None
    return list(dep["spec"]["template"]["spec"]["containers"][0]["command"])


def leader_and_standby(emulator: EmulatorThread, start: Any, *extra: str) -> tuple[Operator, Operator]:
    """Start ``a``, wait until it leads, then start ``b`` and wait until it reports standby."""
    a = start("operator-a", *extra)
    wait_for("a leads", lambda: a.readyz() == "ready (leader)", timeout=STARTUP_TIMEOUT)
    b = start("operator-b", *extra)
    wait_for("b is a standby", lambda: b.readyz() == "ready (standby)", timeout=STARTUP_TIMEOUT)
    return a, b


def test_only_the_leader_writes_and_a_standby_takes_over_after_kill_9(
    emulator: EmulatorThread, start: Any
) -> None:
    a, b = leader_and_standby(emulator, start, *FAST)
    assert a.metric() == "clawplane_leader 1.0" and b.metric() == "clawplane_leader 0.0"
    emulator.apply_object(server("files", ["-y", "files-server"]))
    until(
        emulator, "Programmed", lambda: is_true(emulator.get("mcpservers", "default", "files"), "Programmed")
    )
    assert deployment_args(emulator, "files") is not None
    assert writes_by(emulator, "operator-a"), "the leader wrote the children and statuses"
    assert writes_by(emulator, "operator-b") == [] and writes_by(emulator, "operator-b", lease=True) == []
    a_identity = holder(emulator)

    a.proc.kill()  # SIGKILL: no release, the Lease must expire
    a.proc.wait(timeout=30)
    killed = time.monotonic()
    a_writes = len(writes_by(emulator, "operator-a"))
    emulator.apply_object(server("files", ["-y", "files-server", "--changed-after-kill"]))
    until(emulator, "b holds the Lease", lambda: holder(emulator) not in ("", a_identity), timeout=30)
    takeover = time.monotonic() - killed
    until(
        emulator,
        "b reconciled the change made after the kill",
        lambda: "--changed-after-kill" in (deployment_args(emulator, "files") or []),
        timeout=30,
    )
    converged = time.monotonic() - killed
    print(f"\nkill -9 failover: Lease taken after {takeover:.2f}s, change converged after {converged:.2f}s")
    # The standby saw the last renewal at most one retry period before the kill: it may lead once the
    # lease duration has passed since then (never before), and tries every retry period (+20% jitter).
    assert takeover > LEASE_S - RETRY_S - 0.1, f"took the Lease after {takeover:.2f}s: before it expired"
    assert takeover < LEASE_S + 1.2 * RETRY_S + SCHEDULING_SLACK_S, f"takeover took {takeover:.2f}s"
    wait_for("b reports leader", lambda: b.readyz() == "ready (leader)")
    assert b.metric() == "clawplane_leader 1.0"
    assert len(writes_by(emulator, "operator-a")) == a_writes  # the dead leader wrote nothing more
    # b starts from the cluster's state: the children a made are adopted, never created again.
    b_writes = writes_by(emulator, "operator-b")
    assert not [w for w in b_writes if w.verb == "POST" and w.plural != "events"], b_writes
    dep_writes = [w for w in b_writes if w.plural == "deployments" and w.subresource is None]
    assert len(dep_writes) == 1, dep_writes  # exactly the one change, written once


def test_clean_shutdown_releases_the_lease_for_an_immediate_takeover(
    emulator: EmulatorThread, start: Any
) -> None:
    # A long lease: only the release can explain a takeover within a second.
    slow = ("--leader-elect-lease-duration", "30", "--leader-elect-renew-deadline", "20")
    a, b = leader_and_standby(emulator, start, *slow)
    a_identity = holder(emulator)
    a.proc.send_signal(signal.SIGTERM)
    assert a.proc.wait(timeout=30) == 0, a.output()[-3000:]
    stopped = time.monotonic()
    assert "released the Lease default/clawplane-operator" in a.output()
    until(emulator, "b holds the Lease", lambda: holder(emulator) not in ("", a_identity), timeout=30)
    takeover = time.monotonic() - stopped
    print(f"\nrelease on SIGTERM: Lease taken {takeover:.2f}s after the leader exited (lease: 30 s)")
    assert takeover < 5.0, f"takeover took {takeover:.2f}s: the Lease was not released"
    wait_for("b reports leader", lambda: b.readyz() == "ready (leader)")
    lease = emulator.get(*LEASE)
    assert lease is not None and lease["spec"]["leaseTransitions"] == 1
    assert "Traceback" not in a.output()


def test_a_partitioned_leader_steps_down_and_exits(emulator: EmulatorThread, start: Any) -> None:
    a, _b = leader_and_standby(emulator, start, *FAST)
    emulator.apply_object(server("files", ["-y", "files-server"]))
    until(
        emulator, "Programmed", lambda: is_true(emulator.get("mcpservers", "default", "files"), "Programmed")
    )
    a_identity = holder(emulator)
    emulator.partition("operator-a")  # a's requests fail from now on, its watches end
    cut = time.monotonic()
    assert a.proc.wait(timeout=30) == 1, a.output()[-3000:]
    stepped_down = time.monotonic() - cut
    output = a.output()
    assert f"lost leadership: could not renew the Lease default/clawplane-operator within {RENEW_S:g}s" in output
    assert "stopped reconciling after losing the leader Lease" in output
    until(emulator, "b holds the Lease", lambda: holder(emulator) not in ("", a_identity), timeout=30)
    emulator.apply_object(server("files", ["-y", "files-server", "--changed-after-partition"]))
    until(
        emulator,
        "b reconciled the change",
        lambda: "--changed-after-partition" in (deployment_args(emulator, "files") or []),
        timeout=30,
    )
    print(f"\npartitioned leader exited {stepped_down:.2f}s after the cut (renew deadline {RENEW_S:g} s)")
    # Renewals stop at the renew deadline, counted from the start of the last successful renewal:
    # up to 1.2 retry periods plus that renewal's own time (unbounded on a loaded machine) before the
    # cut. Stepping down at the first failed renewal would come within about one retry period.
    assert stepped_down > RENEW_S / 2, f"stepped down after {stepped_down:.2f}s: too early"
    assert stepped_down < LEASE_S + RETRY_S + SCHEDULING_SLACK_S, f"stepped down after {stepped_down:.2f}s"
