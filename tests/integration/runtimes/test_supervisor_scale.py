"""The folder supervisor's threads do not grow with its servers, and status reports its capacity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "servers" / "minimal_server.py"
HEAD = "apiVersion: clawplane.dev/v1alpha1\n"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pidfds are Linux's")


def clawplane(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([sys.executable, "-m", "clawplane", *args], capture_output=True, text=True,
                          env=env, timeout=300, stdin=subprocess.DEVNULL, check=False)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


def servers(folder: Path, count: int) -> None:
    docs = [HEAD + f"kind: McpServer\nmetadata:\n  name: tiny-{i:02d}\nspec:\n  command: {sys.executable}\n"
            f"  args: [-S, {FIXTURE}, tiny-{i:02d}]\n" for i in range(count)]
    (folder / "servers.yaml").write_text("---\n".join(docs))


def threads_with(folder: Path, count: int) -> tuple[int, dict[str, object]]:
    """The supervisor's thread count with ``count`` Ready servers, and status's supervisor block."""
    servers(folder, count)
    applied = clawplane("apply", str(folder), "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    status = json.loads(clawplane("status", str(folder), "--json").stdout)
    ready = [r for r in status["resources"] if r["phase"] == "Ready"]
    assert len(ready) == count, status
    supervisor = status["supervisor"]
    return psutil.Process(supervisor["pid"]).num_threads(), supervisor


def test_supervisor_threads_are_constant_in_the_number_of_servers(tmp_path: Path) -> None:
    folder = tmp_path / "fleet"
    folder.mkdir()
    try:
        few, _ = threads_with(folder, 2)
        many, supervisor = threads_with(folder, 16)  # the same supervisor, 14 more children
    finally:
        clawplane("down", str(folder))
    assert many == few
    capacity = supervisor["capacity"]
    assert isinstance(capacity, dict)
    _, hard = psutil.Process().rlimit(psutil.RLIMIT_NOFILE)
    assert capacity["fileLimit"] == hard or hard == psutil.RLIM_INFINITY  # soft raised to hard
    assert capacity["openFiles"] > 16 * 3  # every server's pipes are in there
    assert capacity["moreServers"] > 0
