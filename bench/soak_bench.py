"""Soak the supervisor's endpoints: well-behaved consumers keep their latency while one abuses them.

A folder declares two hosted servers (``notes`` and ``files``: the SDK fixture server over stdio,
``perClient``, so every session that lists tools starts a process) and two agents; it is applied
with the real CLI and its supervisor serves everything on loopback. Three well-behaved consumers,
each with its own token and one handshake-era session per endpoint, call at a steady pace:

* ``openclaw``: ``echo`` on ``/mcp/notes`` and ``/mcp/files`` in turn;
* ``agent:alpha``: both servers' ``echo`` through the agent endpoint ``/mcp/agents/alpha``;
* ``cli``: the ``status`` tool of the control plane ``/mcp/_clawplane``.

The abusive consumer (every token a second party could be handed short of theirs: ``codex:beta``
for the hosted servers, ``agent:beta`` for its agent endpoint, ``reader`` for the control plane)
floods sessions that list tools and are abandoned, sends ids no client may send (an object, an
array, a fraction), and asks for plans of the folder with 15,000 documents laid over it (2 MB).

First the well-behaved consumers run alone (``--baseline`` seconds): their p99 per consumer is the
baseline. Then all four run for ``--seconds`` (600). Targets: every well-behaved consumer's p99 is
within 3x its baseline and none of its requests fails; the supervisor's processes and descriptors
stay bounded (the peak of the last third of the run is no higher than the session limits allow and
no more than 1.25x the peak of the first third). Samples of both are printed every minute.

    .venv/bin/python bench/soak_bench.py [--seconds 600] [--baseline 60]

Exit status: 0 when every target is met, 1 when one is missed, 2 when the run failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.support import rawsessions as raw  # noqa: E402
from tests.support.flood import flood_documents  # noqa: E402

SERVER = ROOT / "tests" / "fixtures" / "servers" / "normal_server.py"
P99_TARGET = 3.0
GROWTH_TARGET = 1.25
PACE_S = 0.1
"""Each well-behaved consumer's pause between calls (it is a steady client, not a load generator)."""
MAX_SESSIONS = 32
"""The default session limit of every endpoint."""
FOLDER = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: {name}}}
spec:
  command: {python}
  args: [{server}, --sdk]
  codex:
    agents: [beta]
"""
AGENTS = """apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {{name: {name}}}
spec:
  mcpServers: [notes, files]
"""


@dataclass
class Consumer:
    """What one well-behaved consumer saw."""

    name: str
    times_ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def p99(self) -> float:
        ordered = sorted(self.times_ms)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else float("nan")


@dataclass
class Abuse:
    """What the abusive consumer did and what it got back (HTTP status -> count)."""

    sessions: Counter[int] = field(default_factory=Counter)
    malformed: Counter[int] = field(default_factory=Counter)
    plans: Counter[str] = field(default_factory=Counter)


@dataclass
class Sample:
    """The supervisor at one moment."""

    at_s: float
    processes: int
    fds: int
    rss_mib: float
    own_fds: int
    """The supervisor's own descriptors (``fds`` adds its children's)."""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clawplane", *args], capture_output=True, text=True, timeout=900, check=False
    )


@contextlib.contextmanager
def _applied(workdir: Path) -> Iterator[Path]:
    folder = workdir / "folder"
    folder.mkdir()
    python = json.dumps(sys.executable)
    docs = [FOLDER.format(name=n, python=python, server=json.dumps(str(SERVER))) for n in ("notes", "files")]
    docs += [AGENTS.format(name=n) for n in ("alpha", "beta")]
    (folder / "resources.yaml").write_text("---\n".join(docs))
    done = _cli("apply", str(folder), "--yes")
    if done.returncode != 0:
        raise RuntimeError(f"apply failed: {done.stdout[-800:]}{done.stderr[-800:]}")
    try:
        yield folder
    finally:
        _cli("down", str(folder))


def _token(folder: Path, consumer: str) -> str:
    shown = _cli("token", "show", str(folder), consumer)
    if shown.returncode != 0:
        raise RuntimeError(f"no token for {consumer}: {shown.stderr}")
    return shown.stdout.strip()


def _supervisor(folder: Path) -> tuple[str, psutil.Process]:
    info = json.loads((folder / ".clawplane" / "supervisor.pid").read_text())
    return str(info["endpoint"]), psutil.Process(int(info["pid"]))


def _sample(supervisor: psutil.Process, started: float) -> Sample:
    children = supervisor.children(recursive=True)
    own = fds = supervisor.num_fds()
    for child in children:
        with contextlib.suppress(psutil.Error):
            fds += child.num_fds()
    rss = supervisor.memory_info().rss / 2**20
    return Sample(time.monotonic() - started, 1 + len(children), fds, rss, own)


def _answer(response: httpx.Response) -> dict[str, Any]:
    found = raw.messages(response)
    if response.status_code != 200 or not found:
        raise RuntimeError(f"HTTP {response.status_code}: {response.text[:300]}")
    return found[-1]


async def _call(
    http: httpx.AsyncClient, url: str, token: str, session: str, name: str, args: dict[str, Any], n: int
) -> None:
    body = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": args}}
    answer = _answer(await raw.post(http, url, token, body, session))
    if "result" not in answer or answer["result"].get("isError"):
        raise RuntimeError(f"{name} failed: {json.dumps(answer)[:300]}")


async def _tool_ending(http: httpx.AsyncClient, url: str, token: str, session: str, suffix: str) -> list[str]:
    listed = _answer(await raw.request(http, url, token, session, "tools/list"))
    return [t["name"] for t in listed["result"]["tools"] if t["name"].endswith(suffix)]


async def _steady(
    consumer: Consumer, targets: list[tuple[str, str, dict[str, Any]]], token: str, until: float
) -> None:
    """Call each (url, tool, arguments) in turn at PACE_S until ``until``; every failure is recorded."""
    async with raw.client() as http:
        sessions = {url: await raw.open_session(http, url, token) for url, _, _ in targets}
        n = 0
        # One untimed call per target first: a perClient session starts its process on first use.
        for url, tool, args in targets:
            n += 1
            try:
                await _call(http, url, token, sessions[url], tool, args, n)
            except Exception as exc:  # a soak counts failures rather than stopping at the first
                consumer.failures.append(f"{tool} (first call): {exc}"[:300])
        while time.monotonic() < until:
            url, tool, args = targets[n % len(targets)]
            n += 1
            started = time.perf_counter()
            try:
                await _call(http, url, token, sessions[url], tool, args, n)
            except Exception as exc:  # a soak counts failures rather than stopping at the first
                consumer.failures.append(f"{tool}: {exc}"[:300])
            else:
                consumer.times_ms.append((time.perf_counter() - started) * 1000)
            await anyio.sleep(PACE_S)
        for url, session in sessions.items():
            with contextlib.suppress(httpx.HTTPError):
                await http.delete(url, headers=raw.headers(token, session))


async def _well_behaved(base: str, tokens: dict[str, str], seconds: float) -> list[Consumer]:
    """The three steady consumers for ``seconds``."""
    async with raw.client() as http:
        agent_url = f"{base}/mcp/agents/alpha"
        probe = await raw.open_session(http, agent_url, tokens["agent:alpha"])
        agent_echoes = await _tool_ending(http, agent_url, tokens["agent:alpha"], probe, "echo")
        await http.delete(agent_url, headers=raw.headers(tokens["agent:alpha"], probe))
    if len(agent_echoes) != 2:
        raise RuntimeError(f"the agent endpoint lists {agent_echoes}, not both servers' echo")
    plans: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
        "openclaw": [(f"{base}/mcp/{s}", "echo", {"message": "steady"}) for s in ("notes", "files")],
        "agent:alpha": [(agent_url, name, {"message": "steady"}) for name in agent_echoes],
        "cli": [(f"{base}/mcp/_clawplane", "status", {})],
    }
    consumers = {name: Consumer(name) for name in plans}
    until = time.monotonic() + seconds
    async with anyio.create_task_group() as tg:
        for name, targets in plans.items():
            tg.start_soon(_steady, consumers[name], targets, tokens[name], until)
    return list(consumers.values())


async def _flood_sessions(url: str, token: str, until: float, seen: Counter[int]) -> None:
    """Open sessions that list tools (a process each) and walk away from them."""
    async with raw.client() as http:
        while time.monotonic() < until:
            response = await raw.initialize(http, url, token)
            seen[response.status_code] += 1
            if response.status_code == 200:
                session = response.headers[raw.SESSION]
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await raw.post(http, url, token, note, session)
                listed = await raw.request(http, url, token, session, "tools/list")
                seen[listed.status_code] += 1
            else:
                await anyio.sleep(0.05)  # even an abuser reads a 503 before it tries again


async def _malformed(urls: list[str], token: str, until: float, seen: Counter[int]) -> None:
    """Ids no client may send, as fast as the answers come."""
    bodies = ['{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', '{"jsonrpc":"2.0","id":[1],"method":"ping"}',
              '{"jsonrpc":"2.0","id":1.5,"method":"ping"}']  # fmt: skip
    async with raw.client() as http:
        n = 0
        while time.monotonic() < until:
            response = await raw.post(http, urls[n % len(urls)], token, bodies[n % len(bodies)])
            seen[response.status_code] += 1
            n += 1
            await anyio.sleep(0.01)


async def _huge_plans(url: str, token: str, until: float, seen: Counter[str]) -> None:
    """Plans of the folder with 15,000 documents laid over it, one after another."""
    args = {"documents": flood_documents(15_000)}
    async with raw.client(read_timeout=600) as http:
        session = await raw.open_session(http, url, token)
        n = 0
        while time.monotonic() < until:
            n += 1
            body = {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": "plan", "arguments": args},
            }
            response = await raw.post(http, url, token, body, session)
            found = raw.messages(response) if response.status_code == 200 else []
            if not found:
                seen[f"HTTP {response.status_code}"] += 1
            elif "error" in found[-1]:
                seen[f"error {found[-1]['error'].get('code')}"] += 1
                await anyio.sleep(float(found[-1]["error"].get("data", {}).get("retryAfterMs", 1000)) / 1000)
            else:
                seen["answered"] += 1


async def _abuse(base: str, tokens: dict[str, str], until: float, abuse: Abuse) -> None:
    """Every abuse at once until ``until`` (a ``time.monotonic()`` value)."""
    async with anyio.create_task_group() as tg:
        for server in ("notes", "files"):
            tg.start_soon(
                _flood_sessions, f"{base}/mcp/{server}", tokens["codex:beta"], until, abuse.sessions
            )
        tg.start_soon(_flood_sessions, f"{base}/mcp/agents/beta", tokens["agent:beta"], until, abuse.sessions)
        tg.start_soon(
            _malformed,
            [f"{base}/mcp/notes", f"{base}/mcp/files"],
            tokens["codex:beta"],
            until,
            abuse.malformed,
        )
        tg.start_soon(_malformed, [f"{base}/mcp/agents/beta"], tokens["agent:beta"], until, abuse.malformed)
        tg.start_soon(_huge_plans, f"{base}/mcp/_clawplane", tokens["reader"], until, abuse.plans)


def _abuser_process(base: str, tokens: dict[str, str], seconds: float, out: Any) -> None:
    """The abuser in a process of its own: its client work must not slow the consumers' event loop."""
    abuse = Abuse()
    anyio.run(_abuse, base, tokens, time.monotonic() + seconds, abuse)
    out.put((dict(abuse.sessions), dict(abuse.malformed), dict(abuse.plans)))


async def _watch(supervisor: psutil.Process, until: float, samples: list[Sample]) -> None:
    started = time.monotonic()
    next_print = started
    while time.monotonic() < until:
        sample = _sample(supervisor, started)
        samples.append(sample)
        if time.monotonic() >= next_print:
            print(f"  {sample.at_s:5.0f}s: {sample.processes} processes, {sample.fds} fds "
                  f"({sample.own_fds} the supervisor's), supervisor RSS {sample.rss_mib:.0f} MiB",
                  flush=True)  # fmt: skip
            next_print += 60
        await anyio.sleep(2)


async def _soak(
    base: str, tokens: dict[str, str], supervisor: psutil.Process, seconds: float
) -> tuple[list[Consumer], Abuse, list[Sample]]:
    abuse, samples = Abuse(), list[Sample]()
    box: list[list[Consumer]] = []
    until = time.monotonic() + seconds

    async def good() -> None:
        box.append(await _well_behaved(base, tokens, seconds))

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    abuser = context.Process(target=_abuser_process, args=(base, tokens, seconds, results), daemon=True)
    abuser.start()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch, supervisor, until, samples)
            tg.start_soon(good)
        sessions, malformed, plans = await anyio.to_thread.run_sync(results.get, True, 900)
    finally:
        abuser.join(30)
        if abuser.is_alive():
            abuser.kill()
    abuse.sessions.update(sessions)
    abuse.malformed.update(malformed)
    abuse.plans.update(plans)
    return box[0], abuse, samples


def _report(baseline: list[Consumer], loaded: list[Consumer], abuse: Abuse, samples: list[Sample]) -> bool:
    ok = True
    print(f"{'consumer':12} {'calls':>7} {'median':>9} {'p99':>9} {'base p99':>9} {'ratio':>6} failures")
    for base, load in zip(baseline, loaded, strict=True):
        ratio = load.p99() / base.p99()
        met = ratio <= P99_TARGET and not load.failures and not base.failures
        ok = ok and met
        print(f"{load.name:12} {len(load.times_ms):7} {statistics.median(load.times_ms):7.1f}ms "
              f"{load.p99():7.1f}ms {base.p99():7.1f}ms {ratio:5.2f}x {len(load.failures)} "
              f"-> {'met' if met else 'MISSED'} (target <= {P99_TARGET}x, no failure)")  # fmt: skip
        for failure in load.failures[:5]:
            print(f"    {failure}")
    print(
        f"abuser: sessions {dict(abuse.sessions)}, malformed ids {dict(abuse.malformed)}, "
        f"plans {dict(abuse.plans)}"
    )
    third = max(1, len(samples) // 3)
    first, last = samples[:third], samples[-third:]
    for what in ("processes", "fds"):
        early = max(getattr(s, what) for s in first)
        late = max(getattr(s, what) for s in last)
        bounded = late <= GROWTH_TARGET * early
        if what == "processes":
            # The supervisor, 2 primaries, and at most MAX_SESSIONS per endpoint's session processes
            # (3 endpoints starting processes: /mcp/notes, /mcp/files, and 2 per agent session).
            bounded = bounded and late <= 3 + 4 * MAX_SESSIONS
        ok = ok and bounded
        print(f"{what}: peak {early} in the first third, {late} in the last third "
              f"-> {'bounded' if bounded else 'GROWING'}")  # fmt: skip
    print(
        f"supervisor RSS: {first[0].rss_mib:.0f} MiB at the start, {samples[-1].rss_mib:.0f} MiB at the end; "
        f"its own fds: {first[0].own_fds} at the start, peak {max(s.own_fds for s in first)} in the first "
        f"third, {max(s.own_fds for s in last)} in the last"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--baseline", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with _applied(Path(tmp)) as folder:
                tokens = {
                    c: _token(folder, c)
                    for c in ("openclaw", "agent:alpha", "cli", "codex:beta", "agent:beta", "reader")
                }
                base, supervisor = _supervisor(folder)
                print(f"baseline: the well-behaved consumers alone for {args.baseline:.0f} s", flush=True)
                baseline = anyio.run(_well_behaved, base, tokens, args.baseline)
                print(f"soak: all four for {args.seconds:.0f} s", flush=True)
                loaded, abuse, samples = anyio.run(_soak, base, tokens, supervisor, args.seconds)
        except Exception as exc:  # a bench run that fails says why
            print(f"soak failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
    return 0 if _report(baseline, loaded, abuse, samples) else 1


if __name__ == "__main__":
    sys.exit(main())
