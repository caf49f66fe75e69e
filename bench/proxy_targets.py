"""The five front doors of ``proxy_bench.py``: how each is started on loopback, and torn down.

Each starter is a context manager yielding a ``Target`` (its URL and token) for the same stdio
fixture server: ``direct`` (the MCP SDK serving streamable HTTP itself), ``bridge``, ``hosted``,
``mcp-proxy`` and ``supergateway`` (the peers, from the ``bridge-peers`` oracle).
"""

from __future__ import annotations

import contextlib
import json
import shlex
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.oracles import locate  # noqa: E402

SERVER = ROOT / "tests" / "fixtures" / "servers" / "normal_server.py"
STDIO_SERVER = [sys.executable, str(SERVER), "--sdk"]
ACCEPT = "application/json, text/event-stream"
# supergateway listens on every interface and has no option against it: bind it to loopback.
LOOPBACK_ONLY = r"""
const http = require("http");
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (port, ...rest) {
  const args = typeof port === "number" ? [port, "127.0.0.1", ...rest] : [port, ...rest];
  return listen.apply(this, args);
};
"""


@dataclass
class Target:
    """One way of reaching the server, and what was measured against it."""

    name: str
    url: str
    token: str | None
    httpx_ms: list[float] = field(default_factory=list)
    ts_ms: list[float] = field(default_factory=list)
    done: int = 0
    elapsed: float = 0.0

    @property
    def headers(self) -> dict[str, str]:
        """The headers of a first request (before a session id)."""
        return {"Accept": ACCEPT, **({"Authorization": f"Bearer {self.token}"} if self.token else {})}

    def figures(self) -> dict[str, float]:
        """Median and p99 per call (httpx, TS) and calls per second."""
        return {
            "httpx_median_ms": statistics.median(self.httpx_ms),
            "httpx_p99_ms": _p99(self.httpx_ms),
            "ts_median_ms": statistics.median(self.ts_ms),
            "ts_p99_ms": _p99(self.ts_ms),
            "calls_per_s": self.done / self.elapsed,
        }


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


# -- the targets -------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(proc: subprocess.Popen[bytes], port: int, log: Path, name: str) -> None:
    """Return once ``port`` accepts connections; fail if ``proc`` exits first."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}: {log.read_text()[-800:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.2)  # a bench's readiness poll, not a test's synchronisation
    raise RuntimeError(f"{name} did not listen on port {port} within 120 s")


@contextlib.contextmanager
def _process(argv: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def _direct(workdir: Path) -> Iterator[Target]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--transport", "streamable-http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split()[1])
        yield Target("direct", f"http://127.0.0.1:{port}/mcp", None)
    finally:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def _bridge(workdir: Path) -> Iterator[Target]:
    token = "clawplane_bench-token"
    token_file = workdir / "token"
    token_file.write_text(token)
    token_file.chmod(0o600)
    cmd = [sys.executable, "-m", "clawplane", "bridge", "--port", "0", "--token-file", str(token_file)]
    proc = subprocess.Popen([*cmd, "--", *STDIO_SERVER], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        lines = iter(proc.stderr.readline, "")
        said = next((line for line in lines if "listening on " in line), "")
        if not said or not any("ready:" in line for line in lines):
            raise RuntimeError(f"the bridge exited with {proc.wait()} before its server was ready")
        url = said.split("listening on ", 1)[1].split()[0]
        # Keep reading its stderr so it never blocks on a full pipe.
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        yield Target("bridge", url, token)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@contextlib.contextmanager
def _hosted(workdir: Path) -> Iterator[Target]:
    folder = workdir / "folder"
    folder.mkdir()
    command = ", ".join(json.dumps(part) for part in STDIO_SERVER[1:])
    (folder / "servers.yaml").write_text(
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata: {name: bench}\n"
        f"spec: {{command: {json.dumps(STDIO_SERVER[0])}, args: [{command}]}}\n"
    )
    cli = [sys.executable, "-m", "clawplane"]
    applied = subprocess.run(
        [*cli, "apply", str(folder), "--yes"], capture_output=True, text=True, timeout=600, check=False
    )
    if applied.returncode != 0:
        raise RuntimeError(f"apply failed: {applied.stdout[-500:]}{applied.stderr[-500:]}")
    try:
        config = json.loads((folder / ".clawplane" / "out" / "openclaw.json").read_text())
        entry = config["mcp"]["servers"]["bench"]
        yield Target("hosted", entry["url"], entry["headers"]["Authorization"].removeprefix("Bearer "))
    finally:
        subprocess.run([*cli, "down", str(folder)], capture_output=True, timeout=120, check=False)


@contextlib.contextmanager
def _mcp_proxy(workdir: Path) -> Iterator[Target]:
    cmd = locate.mcp_proxy_cmd()
    assert cmd is not None
    port = _free_port()
    argv = [*cmd, "--host", "127.0.0.1", "--port", str(port), "--log-level", "WARNING", "--", *STDIO_SERVER]
    log = workdir / "mcp-proxy.log"
    with _process(argv, log) as proc:
        _wait_port(proc, port, log, "mcp-proxy")
        yield Target("mcp-proxy", f"http://127.0.0.1:{port}/mcp", None)


@contextlib.contextmanager
def _supergateway(workdir: Path) -> Iterator[Target]:
    cmd = locate.supergateway_cmd()
    assert cmd is not None
    preload = workdir / "loopback-only.cjs"
    preload.write_text(LOOPBACK_ONLY)
    port = _free_port()
    node, script = cmd
    argv = [node, "--require", str(preload), script, "--stdio", shlex.join(STDIO_SERVER)]
    argv += ["--outputTransport", "streamableHttp", "--stateful", "--port", str(port), "--logLevel", "none"]
    log = workdir / "supergateway.log"
    with _process(argv, log) as proc:
        _wait_port(proc, port, log, "supergateway")
        yield Target("supergateway", f"http://127.0.0.1:{port}/mcp", None)


STARTERS = {
    "direct": _direct,
    "bridge": _bridge,
    "hosted": _hosted,
    "mcp-proxy": _mcp_proxy,
    "supergateway": _supergateway,
}
