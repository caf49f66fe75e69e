"""What observing every call costs: the hosted endpoint with telemetry off and on, in one run.

Two supervisors in this process serve the same fixture server (``proxy_server.py``, stdio, MCP
SDK) on their own loopback ports. One has no telemetry; the other has everything the folder
supervisor can turn on: Prometheus metrics (``CallMetrics``), the dashboard's hour
(``CallSeries``), spans of every call exported over OTLP/HTTP to a real loopback receiver
(``CallSpans``, every trace sampled) and the audit trail written to a real state database
(``CallAuditor``). Each of ``--rounds`` rounds opens a handshake-era session to each
(in rotated order, so load drift on this shared machine hits both) and times ``--calls``
sequential ``tools/call echo`` with httpx, from a client process of its own (as agents are).

Target: the median per call with telemetry on is at most 1.05x the median with it off.

    .venv/bin/python bench/telemetry_bench.py [--calls 100] [--rounds 24]

Exit status: 0 when the target is met, 1 when it is missed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import anyio
from prometheus_client import CollectorRegistry

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, TOKEN, guard, stdio_spec  # noqa: E402
from tests.support import rawsessions as raw  # noqa: E402

from clawplane.models import AuditSettings, TraceExport  # noqa: E402
from clawplane.runtimes import Phase, Supervisor  # noqa: E402
from clawplane.state import CallAuditor  # noqa: E402
from clawplane.telemetry import (  # noqa: E402
    CallMetrics,
    CallSeries,
    CallSink,
    CallSite,
    CallSpans,
    CallTelemetry,
    Tracing,
    trace_config,
)

TARGET = 1.05
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


def sinks(collector: str, state_dir: Path) -> tuple[list[CallSink], Callable[[], None]]:
    """Every sink the folder supervisor can register, and what closes them."""
    tracing = Tracing()
    tracing.configure(trace_config(TraceExport(endpoint=collector, sample_ratio=1.0), {}))
    auditor = CallAuditor(state_dir)
    auditor.configure(AuditSettings())
    auditor.start()

    def close() -> None:
        auditor.close()
        tracing.shutdown()

    return [CallMetrics(CollectorRegistry()), CallSeries(), CallSpans(tracing), auditor], close


def sink_cost(telemetry: CallTelemetry, calls: int = 5_000) -> float:
    """Seconds the sinks add to one call, begin to finish, timed without the network (the part of
    the difference that is telemetry's own work, free of this machine's load)."""
    site = CallSite("hosted", "bench", "test", known_tool=lambda _tool: True)
    request = _echo(1, "m")
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "m"}]}}
    started = time.perf_counter()
    for _ in range(calls):
        call = telemetry.begin(site, request, size=120, headers={})
        assert call is not None
        call.forwarded()
        call.finish(answer)
    return (time.perf_counter() - started) / calls


def _echo(request_id: int, message: str) -> dict[str, object]:
    params = {"name": "echo", "arguments": {"message": message}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def client() -> None:
    """The measuring client, a process of its own as agents are: for each ``URL CALLS`` line on
    stdin, one handshake-era session, a warm-up, then ``CALLS`` timed ``tools/call echo``; prints
    the seconds of each as a JSON line."""
    import httpx

    with httpx.Client(timeout=60) as http:
        for line in sys.stdin:
            url, calls = line.split()
            headers = raw.headers(TOKEN)
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
            opened = http.post(url, json=init, headers=headers)
            session = opened.headers["mcp-session-id"]
            notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            http.post(url, json=notice, headers=raw.headers(TOKEN, session))
            for n in range(10):
                http.post(url, json=_echo(n + 1, "warm"), headers=raw.headers(TOKEN, session))
            times = []
            for n in range(int(calls)):
                started = time.perf_counter()
                answer = http.post(url, json=_echo(100 + n, f"m{n}"), headers=raw.headers(TOKEN, session))
                times.append(time.perf_counter() - started)
                assert answer.status_code == 200, answer.text
            http.delete(url, headers=raw.headers(TOKEN, session))
            print(json.dumps(times), flush=True)


async def main(calls: int, rounds: int) -> int:
    work = Path(tempfile.mkdtemp(prefix="clawplane-telemetry-bench-"))
    measured: dict[str, list[float]] = {"off": [], "on": []}
    # The collector is a process of its own, as it would be, and decodes the spans only at the end:
    # its work is not clawplane's, and on this 2-core machine it would take the cores the proxy uses.
    collector = subprocess.Popen(
        [sys.executable, "-m", "tests.support.otlp_receiver"], cwd=ROOT, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert collector.stdin is not None and collector.stdout is not None
    base = collector.stdout.readline().strip()
    found, close = sinks(base + "/v1/traces", work / "state")
    telemetry = CallTelemetry(found)
    try:
        await _measure(work, telemetry, calls, rounds, measured)
        per_call = sink_cost(telemetry)
    finally:
        close()
        collector.stdin.close()
        spans = int(collector.stdout.readline() or 0)
        collector.wait(30)
    medians = {name: statistics.median(times) for name, times in measured.items()}
    p99 = {name: sorted(times)[int(len(times) * 0.99) - 1] for name, times in measured.items()}
    ratio = medians["on"] / medians["off"]
    for name in ("off", "on"):
        print(f"telemetry {name:3}: median {medians[name] * 1000:.3f} ms, p99 {p99[name] * 1000:.3f} ms "
              f"({len(measured[name])} calls)")  # fmt: skip
    share = per_call / medians["off"]
    print(f"the sinks' own work: {per_call * 1e6:.1f} us per call ({share:.2%} of the median call)")
    print(f"spans the collector received: {spans}")
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"on/off median: {ratio:.3f}x (target <= {TARGET}x): {verdict}")
    return 0 if ratio <= TARGET else 1


async def _measure(
    work: Path, telemetry: CallTelemetry, calls: int, rounds: int, measured: dict[str, list[float]]
) -> None:
    async with (
        Supervisor(settings=FAST) as off,
        Supervisor(settings=replace(FAST, telemetry=telemetry)) as on,
    ):
        urls = {}
        for name, supervisor in (("off", off), ("on", on)):
            await supervisor.ensure("bench", stdio_spec("proxy"), config_hash="b", base_dir=work)
            await supervisor.wait_until("bench", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
            urls[name] = (await supervisor.expose(guard())).url("bench")
        measuring = subprocess.Popen(
            [sys.executable, __file__, "--client"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert measuring.stdin is not None and measuring.stdout is not None
        try:
            for round_ in range(rounds):
                order = ["off", "on"] if round_ % 2 == 0 else ["on", "off"]
                for name in order:
                    measuring.stdin.write(f"{urls[name]} {calls}\n")
                    measuring.stdin.flush()
                    # Read in a thread: the supervisors serving the client run on this event loop.
                    line = await anyio.to_thread.run_sync(measuring.stdout.readline)
                    measured[name] += json.loads(line)
        finally:
            measuring.stdin.close()
            measuring.wait(30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=24)
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client()
        sys.exit(0)
    sys.exit(anyio.run(main, args.calls, args.rounds))
