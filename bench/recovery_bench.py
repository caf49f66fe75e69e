"""Recovery benchmark for the folder supervisor (issue 13's two figures).

1. Time from ``kill -9`` of ``clawplane run`` to every server being back: a new
   ``clawplane run --detach`` ends the leftovers and starts each server once. The baseline,
   measured in the same run, is the first cold start of the same folder; the ratio says
   what the crash costs on top of a start.
2. Start-up with 15 leftovers that ignore SIGTERM: time until ``run --detach`` returns (the
   control socket answers) and until all 15 servers are Ready again. Leftovers are ended in
   parallel after the socket answers, so the first figure stays near a plain start and the
   second near one grace period (3 s) plus a start, where sequential 3 s waits before the
   socket used to take 45 s.
Polling here is measurement, not synchronisation: 50 ms resolution is part of the error bar.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "fixtures" / "servers" / "fault_server.py"


def _env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "NO_COLOR": "1"}


def _cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "clawplane", *args], check=True, capture_output=True, env=_env())


def _folder(root: Path, count: int, tag: str, *, ignore_term: bool) -> Path:
    folder = root / tag
    folder.mkdir()
    for i in range(count):
        args = [str(SERVER), "--tag", tag] + (["--ignore-term", "1"] if ignore_term else [])
        doc = {
            "apiVersion": "clawplane.dev/v1alpha1",
            "kind": "McpServer",
            "metadata": {"name": f"s{i:02d}"},
            "spec": {"command": sys.executable, "args": args, "connectionTimeoutMs": 120000},
        }
        (folder / f"s{i:02d}.yaml").write_text(json.dumps(doc))
    return folder


def _ready(folder: Path, count: int, exclude: set[int]) -> bool:
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", "status", str(folder), "--json"],
        capture_output=True, text=True, env=_env(), check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        return False
    servers = [r for r in json.loads(proc.stdout)["resources"] if r["kind"] == "McpServer"]
    live = [r for r in servers if r.get("phase") == "Ready" and r.get("pid") and r["pid"] not in exclude]
    return len(live) == count


def _pids(folder: Path) -> set[int]:
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", "status", str(folder), "--json"],
        capture_output=True, text=True, env=_env(), check=True,
    )  # fmt: skip
    return {r["pid"] for r in json.loads(proc.stdout)["resources"] if r.get("pid")}


def _wait(what: str, done: object, timeout: float = 600) -> float:
    start = time.monotonic()
    while not done():  # type: ignore[operator]
        if time.monotonic() - start > timeout:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)
    return time.monotonic() - start


def _kill_supervisor(folder: Path) -> None:
    pid = json.loads((folder / ".clawplane" / "supervisor.pid").read_text())["pid"]
    os.kill(pid, signal.SIGKILL)
    _wait("the supervisor to die", lambda: not psutil.pid_exists(pid) or
          psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)  # fmt: skip


def _scenario(root: Path, count: int, tag: str, *, ignore_term: bool) -> tuple[float, float, float]:
    """(cold start to all Ready, restart: until the socket answers, restart: until all Ready)."""
    folder = _folder(root, count, tag, ignore_term=ignore_term)
    start = time.monotonic()
    _cli("run", str(folder), "--detach", "--resync-interval", "5")
    _wait("the cold start", lambda: _ready(folder, count, set()))
    cold = time.monotonic() - start
    old = _pids(folder)
    _kill_supervisor(folder)
    start = time.monotonic()
    _cli("run", str(folder), "--detach", "--resync-interval", "5")
    answered = time.monotonic() - start
    _wait("all servers back", lambda: _ready(folder, count, old))
    back = time.monotonic() - start
    _cli("down", str(folder))
    return cold, answered, back


def main() -> None:
    """Print both figures with the cold start of the same folder as the baseline."""
    root = Path(tempfile.mkdtemp(prefix="clawplane-recovery-"))
    try:
        cold, answered, back = _scenario(root, 3, "bench-kill9", ignore_term=False)
        print(f"kill -9 of run -> all 3 servers back: {back:.2f}s (socket answered after {answered:.2f}s); "
              f"cold start of the same folder {cold:.2f}s; ratio {back / cold:.2f}")  # fmt: skip
        cold, answered, back = _scenario(root, 15, "bench-leftovers", ignore_term=True)
        print(f"start-up with 15 SIGTERM-ignoring leftovers: socket answered after {answered:.2f}s, "
              f"all 15 back after {back:.2f}s; cold start {cold:.2f}s; ratio {back / cold:.2f} "
              "(sequential cleanup before the socket: >= 45 s)")  # fmt: skip
    finally:
        for proc in psutil.process_iter(["cmdline"]):
            cmd = proc.info["cmdline"] or []
            if any(t in cmd for t in ("bench-kill9", "bench-leftovers")):
                proc.kill()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
