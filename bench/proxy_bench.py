"""Benchmark the MCP proxy against direct streamable HTTP and two peer stdio→HTTP bridges.

The same fixture server (``tests/fixtures/servers/normal_server.py``, on the MCP SDK) is reached
five ways, all on loopback, all started at once and measured in one run:

* ``direct``: the server itself serving streamable HTTP (the MCP SDK's own HTTP transport);
* ``bridge``: ``clawplane bridge --token-file … -- python normal_server.py --sdk`` (stdio behind
  clawplane's proxy);
* ``hosted``: the supervisor of a folder declaring that server, at ``/mcp/<name>`` with the
  token from its rendered ``openclaw.json``;
* ``mcp-proxy``: ``mcp-proxy`` (PyPI) wrapping the same stdio command, at ``/mcp``;
* ``supergateway``: ``supergateway`` (npm) wrapping it with ``--outputTransport streamableHttp
  --stateful`` (a process per session, as clawplane does), made to listen on 127.0.0.1 only.

Against each: ``--calls`` sequential ``tools/call echo`` over one keep-alive connection with httpx
(handshake-era session, median and p99 per call), the same with the TypeScript SDK client
(``@modelcontextprotocol/sdk`` from the MCP peers oracle, run by Node), and ``--clients``
concurrent httpx clients (calls per second). The work is cut into ``--rounds`` rounds; each round
visits every target in a rotated order, so a load drift on this shared machine hits them all.

Targets: bridge and hosted median (httpx and TS) ≤ 1.25× direct and throughput ≥ 0.85× direct,
and ahead of both peers on every figure (both medians, both p99s, throughput).

    .venv/bin/python bench/proxy_bench.py [--calls 200] [--clients 10] [--rounds 10]

The peers come from ``tests/oracles/install.sh`` (``bridge-peers``, ``mcp-peers``). Exit status:
0 when every target is met, 1 when one is missed, 2 when a peer is missing or a run failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
from anyio.streams.text import TextReceiveStream

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from proxy_targets import STARTERS, Target  # noqa: E402
from tests.oracles import locate  # noqa: E402

MEDIAN_TARGET, THROUGHPUT_TARGET = 1.25, 0.85
OURS, PEERS = ("bridge", "hosted"), ("mcp-proxy", "supergateway")
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
TS_CLIENT = r"""
// One session; each line on stdin is a number of calls to time, answered by a JSON line of times.
const sdk = process.env.TS_SDK;
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const readline = await import("node:readline");
const [url, token] = process.argv.slice(2);
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const client = new Client({ name: "bench", version: "0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
for (let i = 0; i < 10; i++) await client.callTool({ name: "echo", arguments: { message: "warm" } });
console.log("ready");
for await (const line of readline.createInterface({ input: process.stdin })) {
  const times = [];
  for (let i = 0; i < Number(line); i++) {
    const start = process.hrtime.bigint();
    await client.callTool({ name: "echo", arguments: { message: `m${i}` } });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  console.log(JSON.stringify(times));
}
await client.close();
"""


class MissingPeerError(Exception):
    """A peer the bench compares against is not installed; ``str()`` says how to get it."""


def _parse_sse(text: str) -> dict[str, Any]:
    for line in text.splitlines():
        if line.startswith("data: ") and line[6:].strip():
            message: dict[str, Any] = json.loads(line[6:])
            if "id" in message:
                return message
    raise RuntimeError(f"no JSON-RPC response in {text[:200]!r}")


# -- the httpx client --------------------------------------------------------------------------
class Session:
    """One handshake-era MCP session over one keep-alive httpx connection."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.http = httpx.AsyncClient(timeout=120)
        self.headers = target.headers
        self._ids = 0

    async def open(self) -> None:
        """Initialize, then one warm-up call."""
        url = self.target.url
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
        opened = await self.http.post(url, json=init, headers=self.headers)
        opened.raise_for_status()
        self.headers = {
            **self.headers,
            "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        (await self.http.post(url, json=note, headers=self.headers)).raise_for_status()
        await self.call()

    async def call(self) -> None:
        """One ``tools/call echo``."""
        self._ids += 1
        body = {
            "jsonrpc": "2.0",
            "id": self._ids,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": f"m{self._ids}"}},
        }
        response = await self.http.post(self.target.url, json=body, headers=self.headers)
        response.raise_for_status()
        reply = (
            _parse_sse(response.text)
            if response.headers["content-type"].startswith("text/event-stream")
            else response.json()
        )
        if "result" not in reply:
            raise RuntimeError(f"{self.target.name}: call failed: {reply}")

    async def close(self) -> None:
        """End the session and its connection."""
        with contextlib.suppress(httpx.HTTPError):
            await self.http.delete(self.target.url, headers=self.headers)
        await self.http.aclose()


async def _sequential(session: Session, calls: int) -> None:
    for _ in range(calls):
        start = time.perf_counter()
        await session.call()
        session.target.httpx_ms.append((time.perf_counter() - start) * 1000)


async def _concurrent(sessions: list[Session], calls: int) -> None:
    target = sessions[0].target

    async def one(session: Session) -> None:
        for _ in range(calls):
            await session.call()
            target.done += 1

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for session in sessions:
            tg.start_soon(one, session)
    target.elapsed += time.perf_counter() - start


class TsClient:
    """The TypeScript SDK client in a Node process of its own, one session, timing calls on demand."""

    def __init__(self, target: Target, script: Path, node: str) -> None:
        self.target = target
        self._argv = [node, str(script), target.url, target.token or ""]
        self._proc: anyio.abc.Process | None = None
        self._lines: AsyncIterator[str] | None = None
        self._buffer = ""

    async def open(self) -> None:
        """Start it and wait until its session is open and warm."""
        env = {**os.environ, "TS_SDK": str(_ts_sdk())}
        self._proc = await anyio.open_process(self._argv, env=env, stderr=None)
        assert self._proc.stdout is not None
        self._lines = TextReceiveStream(self._proc.stdout).__aiter__()
        if await self._line() != "ready":
            raise RuntimeError(f"{self.target.name}: the TS client did not start")

    async def _line(self) -> str:
        assert self._lines is not None
        while "\n" not in self._buffer:
            try:
                self._buffer += await self._lines.__anext__()
            except StopAsyncIteration:
                raise RuntimeError(f"{self.target.name}: the TS client exited") from None
        line, self._buffer = self._buffer.split("\n", 1)
        return line.strip()

    async def calls(self, count: int) -> None:
        """Time ``count`` calls."""
        assert self._proc is not None and self._proc.stdin is not None
        await self._proc.stdin.send(f"{count}\n".encode())
        self.target.ts_ms.extend(json.loads(await self._line()))

    async def close(self) -> None:
        """End its session and process."""
        if self._proc is not None:
            with contextlib.suppress(Exception):
                assert self._proc.stdin is not None
                await self._proc.stdin.aclose()
                with anyio.move_on_after(10):
                    await self._proc.wait()
            if self._proc.returncode is None:
                self._proc.kill()
            await self._proc.aclose()


def _ts_sdk() -> Path:
    return locate.oracle_dir() / "mcp-peers" / "node_modules" / "@modelcontextprotocol" / "sdk"


async def run(targets: list[Target], calls: int, clients: int, rounds: int, script: Path, node: str) -> None:
    """Open every target's sessions, then measure them round by round in rotated order."""
    sequential = {t.name: Session(t) for t in targets}
    concurrent = {t.name: [Session(t) for _ in range(clients)] for t in targets}
    ts = {t.name: TsClient(t, script, node) for t in targets}
    every: list[Session | TsClient] = [*sequential.values(), *ts.values()]
    every += [s for group in concurrent.values() for s in group]
    try:
        # Sessions (and, behind a bridge, their processes) start before any clock does.
        with anyio.fail_after(600):
            async with anyio.create_task_group() as tg:
                for party in every:
                    tg.start_soon(party.open)
        per_round, per_client = max(1, calls // rounds), max(5, calls // 4 // rounds)
        for number in range(rounds):
            shift = number % len(targets)
            for target in targets[shift:] + targets[:shift]:
                await _sequential(sequential[target.name], per_round)
                await ts[target.name].calls(per_round)
                await _concurrent(concurrent[target.name], per_client)
            print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    finally:
        with anyio.CancelScope(shield=True):
            for party in every:
                await party.close()


def _missing() -> list[str]:
    """Why each peer or client that the comparison needs cannot run."""
    problems = [f"{tool}: {why}" for tool in PEERS if (why := locate.unavailable_reason(tool))]
    if locate.unavailable_reason("server-everything") or not (_ts_sdk() / "package.json").is_file():
        problems.append(f"the TypeScript SDK client: {_ts_sdk()} is missing; run tests/oracles/install.sh")
    return problems


# -- the report --------------------------------------------------------------------------------
FIGURES = ("httpx_median_ms", "httpx_p99_ms", "ts_median_ms", "ts_p99_ms", "calls_per_s")


def report(results: dict[str, dict[str, float]]) -> bool:
    """Print the table and the verdicts; True when every target is met."""
    base = results["direct"]
    print(
        f"{'target':13} {'httpx med':>9} {'p99':>7} {'TS med':>7} {'p99':>7} {'calls/s':>8} "
        f"| {'med×':>5} {'TS med×':>7} {'calls/s×':>8}"
    )
    for name, r in results.items():
        print(
            f"{name:13} {r['httpx_median_ms']:7.2f}ms {r['httpx_p99_ms']:5.2f}ms "
            f"{r['ts_median_ms']:5.2f}ms {r['ts_p99_ms']:5.2f}ms {r['calls_per_s']:8.1f} "
            f"| {r['httpx_median_ms'] / base['httpx_median_ms']:5.2f} "
            f"{r['ts_median_ms'] / base['ts_median_ms']:7.2f} {r['calls_per_s'] / base['calls_per_s']:8.2f}"
        )
    ok = True
    for name in OURS:
        r, misses = results[name], []
        for figure in ("httpx_median_ms", "ts_median_ms"):
            if r[figure] > MEDIAN_TARGET * base[figure]:
                misses.append(f"{figure} {r[figure] / base[figure]:.2f}x direct > {MEDIAN_TARGET}x")
        if r["calls_per_s"] < THROUGHPUT_TARGET * base["calls_per_s"]:
            ratio = r["calls_per_s"] / base["calls_per_s"]
            misses.append(f"calls/s {ratio:.2f}x direct < {THROUGHPUT_TARGET}x")
        for peer in PEERS:
            for figure in FIGURES:
                ours, theirs = r[figure], results[peer][figure]
                behind = ours < theirs if figure == "calls_per_s" else ours > theirs
                if behind:
                    misses.append(f"{figure} behind {peer} ({ours:.2f} vs {theirs:.2f})")
        ok = ok and not misses
        print(f"{name}: " + ("met" if not misses else "MISSED: " + "; ".join(misses)))
    return ok


def _causes(exc: BaseException) -> list[str]:
    """The leaf exceptions of ``exc`` (a task group's are wrapped), each as ``Type: message``."""
    if isinstance(exc, BaseExceptionGroup):
        return [cause for inner in exc.exceptions for cause in _causes(inner)]
    return [f"{type(exc).__name__}: {exc}"]


def main() -> int:
    """Run the bench; see the module docstring."""
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--calls", type=int, default=200, help="sequential calls per client and target")
    parser.add_argument("--clients", type=int, default=10, help="concurrent clients for calls/s")
    parser.add_argument("--rounds", type=int, default=10, help="rounds the work is cut into (rotated order)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    problems = _missing()
    node = locate.supergateway_cmd()
    if problems or node is None:
        print("proxy_bench: cannot compare, missing:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        workdir = Path(tmp)
        script = workdir / "ts_client.mjs"
        script.write_text(TS_CLIENT)
        targets: list[Target] = []
        try:
            for starter in STARTERS.values():
                targets.append(stack.enter_context(starter(workdir)))
            anyio.run(run, targets, args.calls, args.clients, args.rounds, script, node[0])
        except Exception as exc:  # a bench run that fails says which and why
            print(f"proxy_bench: failed: {'; '.join(_causes(exc))}", file=sys.stderr)
            return 2
    results = {t.name: t.figures() for t in targets}
    ok = report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
