"""Benchmark the MCP supervisor against a bare anyio script starting the same servers.

Starts 20 fixture stdio servers (``tests/fixtures/servers/normal_server.py --sdk``) concurrently,
each in its own fresh interpreter so both sides pay the same import costs:

* ``bare``: an anyio task group opening 20 SDK ``Client``s (``StdioServerParameters``,
  ``mode="auto"``), each initializing and listing tools;
* ``supervisor``: ``Supervisor.ensure`` for the 20 servers, then waiting until every one
  is ready (spawned in its own process group, stderr read, handshake, change
  subscription, bounded tool listing, catalog built).

The time is from the first spawn to the last server listed, measured inside each process
after its imports. The supervisor run also measures its own memory per managed server:
the growth of its RSS from before the 20 servers start (after one warm-up server, so
lazily loaded code is already in) to when all are ready, divided by 20. Targets:
supervisor ≤ 1.10× bare, ≤ 2 MB per managed server.

    .venv/bin/python bench/runtimes_bench.py [--servers 20]

Exit status: 0 when both targets are met, 1 when one is missed, 2 when a run failed.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "fixtures" / "servers" / "normal_server.py"
RATIO_TARGET, MEMORY_TARGET_MB = 1.10, 2.0
START_TIMEOUT = 300.0


def run_bare(count: int) -> dict[str, Any]:
    """Spawn, initialize and list ``count`` servers with the bare SDK; report the elapsed time."""
    import anyio
    from mcp import Client, StdioServerParameters

    async def main() -> float:
        listed = 0
        all_listed = anyio.Event()
        release = anyio.Event()
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "--sdk"])

        async def one() -> None:
            nonlocal listed
            async with Client(params, mode="auto", read_timeout_seconds=START_TIMEOUT) as client:
                await client.list_tools()
                listed += 1
                if listed == count:
                    all_listed.set()
                await release.wait()

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(count):
                tg.start_soon(one)
            with anyio.fail_after(START_TIMEOUT):
                await all_listed.wait()
            elapsed = time.perf_counter() - start
            release.set()
        return elapsed

    return {"seconds": anyio.run(main)}


def run_supervisor(count: int) -> dict[str, Any]:
    """Start ``count`` servers through the supervisor; report the time and memory growth."""
    import anyio
    import psutil

    from clawplane.models import McpServerSpec
    from clawplane.runtimes import Phase, Supervisor

    spec = McpServerSpec(
        command=sys.executable, args=[str(SERVER), "--sdk"], connection_timeout_ms=int(START_TIMEOUT * 1000)
    )

    async def main() -> dict[str, Any]:
        async with Supervisor() as supervisor:

            async def ready(name: str) -> None:
                await supervisor.wait_until(name, lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)

            # Warm-up: one server through the whole path, so lazily loaded code is resident.
            await supervisor.ensure("warmup", spec, config_hash="w", base_dir=ROOT)
            await ready("warmup")
            await supervisor.remove("warmup")
            gc.collect()
            rss_before = psutil.Process().memory_info().rss

            start = time.perf_counter()
            names = [f"server-{n}" for n in range(count)]
            for name in names:
                await supervisor.ensure(name, spec, config_hash="h", base_dir=ROOT)
            async with anyio.create_task_group() as tg:
                for name in names:
                    tg.start_soon(ready, name)
            elapsed = time.perf_counter() - start
            tools = len(supervisor.catalog())

            gc.collect()
            rss_after = psutil.Process().memory_info().rss
        return {
            "seconds": elapsed,
            "tools": tools,
            "rss_before_mb": rss_before / 2**20,
            "rss_after_mb": rss_after / 2**20,
            "mb_per_server": (rss_after - rss_before) / 2**20 / count,
        }

    return anyio.run(main)


def measure(mode: str, count: int) -> dict[str, Any]:
    """Run one side in a fresh interpreter and parse its JSON report."""
    argv = [sys.executable, __file__, "--child", mode, "--servers", str(count)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=START_TIMEOUT * 2, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} run failed (rc {proc.returncode}):\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    """Run both sides once, print the numbers, check the targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=20)
    parser.add_argument("--child", choices=["bare", "supervisor"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path[:0] = [str(ROOT / "operator")]
        report = run_bare(args.servers) if args.child == "bare" else run_supervisor(args.servers)
        print(json.dumps(report))
        return 0
    try:
        bare = measure("bare", args.servers)
        supervised = measure("supervisor", args.servers)
    except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        print(f"bench failed: {exc}", file=sys.stderr)
        return 2
    ratio = supervised["seconds"] / bare["seconds"]
    per_server = supervised["mb_per_server"]
    print(f"{args.servers} stdio fixture servers started concurrently (spawn → initialized → tools listed)")
    print(f"  bare anyio + SDK Client : {bare['seconds']:7.2f} s")
    print(
        f"  clawplane Supervisor    : {supervised['seconds']:7.2f} s  ({supervised['tools']} catalog entries)"
    )
    print(f"  ratio                   : {ratio:7.3f}x  (target <= {RATIO_TARGET:.2f}x)")
    print(
        f"  supervisor memory       : {per_server:7.3f} MB per managed server "
        f"(RSS {supervised['rss_before_mb']:.1f} -> {supervised['rss_after_mb']:.1f} MB; "
        f"target <= {MEMORY_TARGET_MB} MB)"
    )
    ok = ratio <= RATIO_TARGET and per_server <= MEMORY_TARGET_MB
    print("targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
