"""What observing every call costs: the hosted endpoint with telemetry off and on, in one run.

Two supervisors in this process serve the same fixture server (``proxy_server.py``, stdio, MCP
SDK) on their own loopback ports. One has no telemetry; the other has everything the folder
supervisor turns on: Prometheus metrics (``CallMetrics``), the dashboard's hour
(``CallSeries``), and, when built, traces exported over OTLP/HTTP to a loopback receiver and the
audit trail (see ``sinks``). Each of ``--rounds`` rounds opens a handshake-era session to each
(in rotated order, so load drift on this shared machine hits both) and times ``--calls``
sequential ``tools/call echo`` with httpx.

Target: the median per call with telemetry on is at most 1.05x the median with it off.

    .venv/bin/python bench/telemetry_bench.py [--calls 100] [--rounds 24]

Exit status: 0 when the target is met, 1 when it is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import anyio
from prometheus_client import CollectorRegistry

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, TOKEN, guard, stdio_spec  # noqa: E402
from tests.support import rawsessions as raw  # noqa: E402

from clawplane.runtimes import Phase, Supervisor  # noqa: E402
from clawplane.telemetry import CallMetrics, CallSeries, CallSink, CallSite, CallTelemetry  # noqa: E402

TARGET = 1.05


def sinks() -> list[CallSink]:
    """Every sink the folder supervisor registers."""
    return [CallMetrics(CollectorRegistry()), CallSeries()]


def sink_cost(calls: int = 20_000) -> float:
    """Seconds the sinks add to one call, begin to finish, timed without the network (the part of
    the difference that is telemetry's own work, free of this machine's load)."""
    telemetry = CallTelemetry(sinks())
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


async def time_calls(url: str, calls: int) -> list[float]:
    """Seconds per ``tools/call echo`` over one handshake-era session (after a warm-up)."""
    async with raw.client() as http:
        session = await raw.open_session(http, url, TOKEN)
        for n in range(10):
            await raw.post(http, url, TOKEN, _echo(n + 1, "warm"), session)
        times = []
        for n in range(calls):
            started = time.perf_counter()
            answer = await raw.post(http, url, TOKEN, _echo(100 + n, f"m{n}"), session)
            times.append(time.perf_counter() - started)
            assert answer.status_code == 200, answer.text
    return times


async def main(calls: int, rounds: int) -> int:
    work = Path(tempfile.mkdtemp(prefix="clawplane-telemetry-bench-"))
    measured: dict[str, list[float]] = {"off": [], "on": []}
    async with (
        Supervisor(settings=FAST) as off,
        Supervisor(settings=replace(FAST, telemetry=CallTelemetry(sinks()))) as on,
    ):
        urls = {}
        for name, supervisor in (("off", off), ("on", on)):
            await supervisor.ensure("bench", stdio_spec("proxy"), config_hash="b", base_dir=work)
            await supervisor.wait_until("bench", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
            urls[name] = (await supervisor.expose(guard())).url("bench")
        for round_ in range(rounds):
            order = ["off", "on"] if round_ % 2 == 0 else ["on", "off"]
            for name in order:
                measured[name] += await time_calls(urls[name], calls)
    medians = {name: statistics.median(times) for name, times in measured.items()}
    per_call = sink_cost()
    p99 = {name: sorted(times)[int(len(times) * 0.99) - 1] for name, times in measured.items()}
    ratio = medians["on"] / medians["off"]
    for name in ("off", "on"):
        print(f"telemetry {name:3}: median {medians[name] * 1000:.3f} ms, p99 {p99[name] * 1000:.3f} ms "
              f"({len(measured[name])} calls)")  # fmt: skip
    share = per_call / medians["off"]
    print(f"the sinks' own work: {per_call * 1e6:.1f} us per call ({share:.2%} of the median call)")
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"on/off median: {ratio:.3f}x (target <= {TARGET}x): {verdict}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=24)
    args = parser.parse_args()
    sys.exit(anyio.run(main, args.calls, args.rounds))
