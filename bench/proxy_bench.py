"""Benchmark the MCP proxy: direct streamable HTTP vs ``clawplane bridge`` vs the hosted endpoint.

The same fixture server (``tests/fixtures/servers/normal_server.py --sdk``) is reached three ways,
all on loopback and all measured in one run:

* ``direct``: the server itself serving streamable HTTP (the MCP SDK's own HTTP transport);
* ``bridge``: ``clawplane bridge --token-file … -- python normal_server.py`` (stdio behind the proxy);
* ``hosted``: the supervisor of a folder declaring that server, at ``/mcp/<name>`` with the
  token from its rendered ``openclaw.json``.

Against each: 200 sequential ``tools/call echo`` over one keep-alive connection with httpx
(handshake-era session, median and p99 per call), the same with the TypeScript SDK client
(``@modelcontextprotocol/sdk`` from the MCP peers oracle, run by Node), and 10 concurrent
httpx clients (calls per second). Targets: bridge and hosted median ≤ 1.3× direct, throughput
≥ 0.8× direct.

    .venv/bin/python bench/proxy_bench.py [--calls 200] [--clients 10]

Exit status: 0 when every target is met, 1 when one is missed, 2 when a run failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "fixtures" / "servers" / "normal_server.py"
ORACLES = Path(os.environ.get("CLAWPLANE_ORACLE_DIR", Path.home() / ".cache" / "clawplane-oracles"))
TS_SDK = ORACLES / "mcp-peers" / "node_modules" / "@modelcontextprotocol" / "sdk"
MEDIAN_TARGET, THROUGHPUT_TARGET = 1.3, 0.8
ACCEPT = "application/json, text/event-stream"
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
TS_CLIENT = r"""
const sdk = process.env.TS_SDK;
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const [url, token, calls] = process.argv.slice(2);
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const client = new Client({ name: "bench", version: "0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
const times = [];
for (let i = 0; i < 10; i++) await client.callTool({ name: "echo", arguments: { message: "warm" } });
for (let i = 0; i < Number(calls); i++) {
  const start = process.hrtime.bigint();
  await client.callTool({ name: "echo", arguments: { message: `m${i}` } });
  times.push(Number(process.hrtime.bigint() - start) / 1e6);
}
await client.close();
console.log(JSON.stringify(times));
"""


def _parse_sse(text: str) -> dict[str, Any]:
    for line in text.splitlines():
        if line.startswith("data: ") and line[6:].strip():
            message: dict[str, Any] = json.loads(line[6:])
            if "id" in message:
                return message
    raise RuntimeError(f"no JSON-RPC response in {text[:200]!r}")


async def _session(http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> dict[str, str]:
    opened = await http.post(
        url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}, headers=headers
    )
    opened.raise_for_status()
    session = {
        **headers,
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-11-25",
    }
    note = await http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
    )
    note.raise_for_status()
    return session


async def _call(http: httpx.AsyncClient, url: str, headers: dict[str, str], n: int) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": f"m{n}"}},
    }
    response = await http.post(url, json=body, headers=headers)
    response.raise_for_status()
    reply = (
        _parse_sse(response.text)
        if response.headers["content-type"].startswith("text/event-stream")
        else response.json()
    )
    if "result" not in reply:
        raise RuntimeError(f"call failed: {reply}")


async def _sequential(url: str, token: str | None, calls: int) -> list[float]:
    headers = {"Accept": ACCEPT, **({"Authorization": f"Bearer {token}"} if token else {})}
    async with httpx.AsyncClient(timeout=60) as http:
        session = await _session(http, url, headers)
        for n in range(10):
            await _call(http, url, session, n)
        times = []
        for n in range(calls):
            start = time.perf_counter()
            await _call(http, url, session, 100 + n)
            times.append((time.perf_counter() - start) * 1000)
        await http.delete(url, headers=session)
    return times


async def _concurrent(url: str, token: str | None, clients: int, calls: int) -> float:
    headers = {"Accept": ACCEPT, **({"Authorization": f"Bearer {token}"} if token else {})}
    done = opened = 0
    all_open, go = anyio.Event(), anyio.Event()

    async def one() -> None:
        nonlocal done, opened
        async with httpx.AsyncClient(timeout=120) as http:
            session = await _session(http, url, headers)
            await _call(http, url, session, 1)
            opened += 1
            if opened == clients:
                all_open.set()
            await go.wait()
            for n in range(calls):
                await _call(http, url, session, 10 + n)
                done += 1
            await http.delete(url, headers=session)

    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(one)
        # Sessions (and, behind the proxy, their processes) start before the clock does.
        with anyio.fail_after(300):
            await all_open.wait()
        start = time.perf_counter()
        go.set()
    return done / (time.perf_counter() - start)


def _ts(url: str, token: str | None, calls: int) -> list[float] | None:
    node = shutil.which("node")
    if node is None or not (TS_SDK / "package.json").is_file():
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".mjs", delete=False) as script:
        script.write(TS_CLIENT)
    try:
        env = {**os.environ, "TS_SDK": str(TS_SDK)}
        argv = [node, script.name, url, token or "", str(calls)]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, check=False)
    finally:
        os.unlink(script.name)
    if proc.returncode != 0:
        raise RuntimeError(f"TS client failed: {proc.stderr[-500:]}")
    times: list[float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return times


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


@contextlib.contextmanager
def _direct() -> Iterator[tuple[str, str | None]]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--transport", "streamable-http"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split()[1])
        yield f"http://127.0.0.1:{port}/mcp", None
    finally:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def _bridge(workdir: Path) -> Iterator[tuple[str, str | None]]:
    token = "clawplane_bench-token"
    token_file = workdir / "token"
    token_file.write_text(token)
    token_file.chmod(0o600)
    cmd = [
        sys.executable,
        "-m",
        "clawplane",
        "bridge",
        "--port",
        "0",
        "--token-file",
        str(token_file),
        "--",
        sys.executable,
        str(SERVER),
        "--sdk",
    ]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = ""
        for line in proc.stderr:
            if "listening on " in line:
                url = line.split("listening on ", 1)[1].split()[0]
            if "ready:" in line:
                break
        _drain(proc)
        yield url, token
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _drain(proc: subprocess.Popen[str]) -> None:
    """Keep reading the bridge's stderr so it never blocks on a full pipe."""
    import threading

    assert proc.stderr is not None
    threading.Thread(target=proc.stderr.read, daemon=True).start()


@contextlib.contextmanager
def _hosted(workdir: Path) -> Iterator[tuple[str, str | None]]:
    folder = workdir / "folder"
    folder.mkdir()
    (folder / "servers.yaml").write_text(
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata: {name: bench}\n"
        f"spec: {{command: {sys.executable}, args: [{SERVER}, --sdk]}}\n"
    )
    cli = [sys.executable, "-m", "clawplane"]
    applied = subprocess.run(
        [*cli, "apply", str(folder), "--yes"], capture_output=True, text=True, timeout=600, check=False
    )
    if applied.returncode != 0:
        raise RuntimeError(f"apply failed: {applied.stdout[-500:]}{applied.stderr[-500:]}")
    try:
        entry = json.loads((folder / ".clawplane" / "out" / "openclaw.json").read_text())["mcp"]["servers"][
            "bench"
        ]
        yield entry["url"], entry["headers"]["Authorization"].removeprefix("Bearer ")
    finally:
        subprocess.run([*cli, "down", str(folder)], capture_output=True, timeout=120, check=False)


def measure(url: str, token: str | None, calls: int, clients: int) -> dict[str, Any]:
    """Sequential httpx and TS SDK latencies, and concurrent throughput, against one target."""
    httpx_times = anyio.run(_sequential, url, token, calls)
    ts_times = _ts(url, token, calls)
    throughput = anyio.run(_concurrent, url, token, clients, max(20, calls // 4))
    result: dict[str, Any] = {
        "httpx_median_ms": statistics.median(httpx_times),
        "httpx_p99_ms": _p99(httpx_times),
        "throughput_calls_per_s": throughput,
    }
    if ts_times is not None:
        result["ts_median_ms"] = statistics.median(ts_times)
        result["ts_p99_ms"] = _p99(ts_times)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--clients", type=int, default=10)
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for name, target in (
            ("direct", _direct()),
            ("bridge", _bridge(workdir)),
            ("hosted", _hosted(workdir)),
        ):
            try:
                with target as (url, token):
                    results[name] = measure(url, token, args.calls, args.clients)
            except Exception as exc:  # a bench run that fails says which and why
                print(f"{name}: failed: {exc}", file=sys.stderr)
                return 2
    base = results["direct"]
    ok = True
    print(f"{'target':8} {'httpx med':>10} {'httpx p99':>10} {'ts med':>8} {'ts p99':>8} {'calls/s':>9}")
    for name, r in results.items():
        print(
            f"{name:8} {r['httpx_median_ms']:9.2f}ms {r['httpx_p99_ms']:9.2f}ms "
            f"{r.get('ts_median_ms', float('nan')):7.2f}ms {r.get('ts_p99_ms', float('nan')):7.2f}ms "
            f"{r['throughput_calls_per_s']:9.1f}"
        )
    for name in ("bridge", "hosted"):
        r = results[name]
        ratio = r["httpx_median_ms"] / base["httpx_median_ms"]
        ts_ratio = (
            r["ts_median_ms"] / base["ts_median_ms"]
            if "ts_median_ms" in r and "ts_median_ms" in base
            else None
        )
        throughput = r["throughput_calls_per_s"] / base["throughput_calls_per_s"]
        met = (
            ratio <= MEDIAN_TARGET
            and throughput >= THROUGHPUT_TARGET
            and (ts_ratio is None or ts_ratio <= MEDIAN_TARGET)
        )
        ok = ok and met
        ts_text = f", TS median {ts_ratio:.2f}x" if ts_ratio is not None else ", TS client unavailable"
        print(
            f"{name}: httpx median {ratio:.2f}x direct{ts_text} (target <= {MEDIAN_TARGET}x), "
            f"throughput {throughput:.2f}x direct (target >= {THROUGHPUT_TARGET}x) -> "
            f"{'met' if met else 'MISSED'}"
        )
    print(json.dumps(results, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
