"""Run the official MCP conformance suite (server mode) against a URL and judge it by its checks.

``@modelcontextprotocol/conformance`` 0.1.16 acts as a client (the TS SDK's) against a
streamable-HTTP server that implements its fixtures (``tests/fixtures/servers/conformance_server.py``
does). It writes one ``checks.json`` per scenario; its own summary counts a scenario with no
failed check as passed, even when nothing succeeded, so results here are read from the checks:

    results = run_suite(url, out_dir=tmp_path / "suite")       # {scenario: ScenarioResult}
    passing = sorted(name for name, r in results.items() if r.passed)   # >= 1 SUCCESS, no FAILURE
    assert passing == list(DIRECT_PASSING)
    assert not differences(direct, results)                     # per-check statuses identical
    assert not regressions(direct, results)                     # nothing that passed directly got worse

Behind clawplane's proxy the suite cannot send the bearer token: wrap the proxy's URL with
``tests.support.forwarder.token_forwarder`` and run the suite against the forwarder's URL.

``probe_resumption(url)`` checks what the suite cannot (see ``SSE_POLLING_NOTE``): a stream closed
mid-call is resumed by ``GET`` with ``Last-Event-ID`` and delivers the result.

The suite needs Node 22 (``tests/oracles/install.sh`` installs it, ``locate.conformance_cmd()``).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from tests.oracles import locate
from tests.support.processes import read_ready, stop_group

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "conformance_server.py"

SCENARIOS_ALL = (
    "server-initialize",
    "logging-set-level",
    "ping",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "json-schema-2020-12",
    "elicitation-sep1034-defaults",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "elicitation-sep1330-enums",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
)
"""The 32 server scenarios of conformance 0.1.16 (``conformance list``), in the order ``--suite all`` runs them."""

PENDING = ("json-schema-2020-12", "server-sse-polling")
"""Scenarios 0.1.16 leaves out of its default ``active`` suite."""

DIRECT_PASSING = tuple(sorted(set(SCENARIOS_ALL) - {"server-sse-polling"}))
"""Scenarios the fixture passes directly over HTTP with at least one SUCCESS and no FAILURE (31)."""

SSE_POLLING_VERDICT = (
    ("server-sse-priming-event", "WARNING"),
    ("server-sse-retry-field", "WARNING"),
)
"""``server-sse-polling`` directly: no failure, no success (the suite's summary still says ✓)."""

SSE_POLLING_NOTE = """\
server-sse-polling cannot succeed against an mcp 2.3 server (nor the TS SDK 1.32 reference server):
the scenario's raw POST of tools/call test_reconnection sends `mcp-protocol-version: 2025-03-26`
(sse-polling.ts), although the session negotiated 2025-11-25. StreamableHTTPServerTransport decides
per request, from that header, whether the client can resume: below 2025-11-25 it mints no priming
event (`_mint_priming_event`) and hands the tool no close-stream callback
(`_create_session_message`), so `ctx.close_sse_stream()` is a no-op and the result arrives on the
POST stream. The checks are then WARNING (no priming event), WARNING (no retry field) and INFO
(no disconnect), with nothing to succeed. probe_resumption() sends the negotiated version and shows
the same fixture closing the stream mid-call and resuming it with Last-Event-ID."""

SUITE_TIMEOUT = 60.0
"""Seconds one ``--suite all`` run may take. Measured on the 2-core box: 1.7-2.2 s wall when idle,
3.2-4.3 s while other test runs shared it (about 0.6 CPU-s of Node; the token forwarder adds about
1 s). 60 s leaves over 10x for a loaded machine and still stops a run against a hung server early
(the suite's client waits 60 s for each unanswered request). Tests running the suite raise their
pytest timeout to ``TEST_TIMEOUT`` so that this bound, with its message, fires first."""

TEST_TIMEOUT = 300
"""pytest timeout for a test that runs the suite up to twice plus a fixture start."""

START_TIMEOUT = 60.0
"""Seconds to wait for the Python fixture to listen (``import mcp`` is ~1 CPU-s; 2 busy cores)."""

_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
_OUTPUT_TAIL = 4000


@dataclass(frozen=True)
class Check:
    """One entry of a scenario's ``checks.json``."""

    id: str
    status: str  # SUCCESS | FAILURE | WARNING | INFO | SKIPPED
    description: str = ""
    error: str | None = None


@dataclass(frozen=True)
class ScenarioResult:
    """The checks of one scenario, and what they add up to."""

    name: str
    checks: tuple[Check, ...]

    def count(self, status: str) -> int:
        """How many checks have ``status``."""
        return sum(1 for c in self.checks if c.status == status)

    @property
    def passed(self) -> bool:
        """At least one check succeeded and none failed (the suite's own ✓ needs only the latter)."""
        return self.count("SUCCESS") > 0 and self.count("FAILURE") == 0

    @property
    def verdict(self) -> tuple[tuple[str, str], ...]:
        """``(check id, status)`` of every judged check, in order; INFO entries are diagnostics."""
        return tuple((c.id, c.status) for c in self.checks if c.status != "INFO")

    def describe(self) -> str:
        """One line per judged check, with the suite's error message for failures and warnings."""
        lines = [f"{self.name}:"]
        for c in self.checks:
            if c.status != "INFO":
                lines.append(f"  {c.status:<7} {c.id}" + (f": {c.error}" if c.error else ""))
        return "\n".join(lines)


class SuiteResults(dict[str, ScenarioResult]):
    """``{scenario: ScenarioResult}`` for one run, with how the run went."""

    def __init__(
        self,
        results: Mapping[str, ScenarioResult],
        *,
        url: str,
        wall_seconds: float,
        returncode: int,
        output: str,
        out_dir: Path,
    ) -> None:
        super().__init__(results)
        self.url = url
        self.wall_seconds = wall_seconds
        self.returncode = returncode
        self.output = output
        self.out_dir = out_dir
        self.forwarded: list[Any] | None = None
        """Set by the compat ``conformance_suite(..., token=)`` fixture: the forwarder's log."""

    @property
    def passing(self) -> list[str]:
        """Sorted names of the scenarios that passed (see ``ScenarioResult.passed``)."""
        return sorted(name for name, r in self.items() if r.passed)

    def totals(self) -> dict[str, int]:
        """Check counts by status over all scenarios."""
        out = {s: 0 for s in ("SUCCESS", "FAILURE", "WARNING", "INFO")}
        for r in self.values():
            for c in r.checks:
                out[c.status] = out.get(c.status, 0) + 1
        return out

    def report(self) -> str:
        """Human summary: totals, wall time, and every scenario that did not pass."""
        t = self.totals()
        head = (
            f"conformance {self.url}: {len(self.passing)}/{len(self)} scenarios passed; checks "
            f"{t['SUCCESS']} success, {t['FAILURE']} failure, {t['WARNING']} warning, "
            f"{t['INFO']} info; {self.wall_seconds:.1f} s; results in {self.out_dir}"
        )
        rest = [r.describe() for r in self.values() if not r.passed]
        return "\n".join([head, *rest])


class SuiteError(AssertionError):
    """The suite could not be run or did not report every scenario it was asked to run."""


REVISIONS = ("2025-11-25", "2026-07-28")
"""The revisions whose frozen requirements the 0.2 pre-release of the suite runs (``--requirements``)."""


def revision_scenarios(revision: str) -> tuple[str, ...]:
    """The server scenarios ``--requirements REVISION`` runs: the scored ones, then the not-scored
    ones of the server leg (extensions, pending), as the suite's own requirements file lists them."""
    from ruamel.yaml import YAML

    js = Path(next_suite_cmd()[1])
    frozen = YAML(typ="safe").load((js.parents[1] / "requirements" / f"{revision}.yaml").read_text("utf-8"))
    extra = [e["scenario"] for e in frozen.get("not_scored") or () if e.get("leg") == "server"]
    return (*frozen["server"], *extra)


def next_suite_cmd() -> list[str]:
    """``[node22, .../conformance/dist/index.js]`` of the 0.2 pre-release, or SuiteError saying why not."""
    cmd = locate.conformance_next_cmd()
    if cmd is None:
        raise SuiteError(
            f"ORACLE UNAVAILABLE: conformance-next: {locate.unavailable_reason('conformance-next')}"
        )
    return cmd


def suite_cmd() -> list[str]:
    """``[node22, .../conformance/dist/index.js]``, or SuiteError saying why it is unavailable."""
    cmd = locate.conformance_cmd()
    if cmd is None:
        raise SuiteError(f"ORACLE UNAVAILABLE: conformance: {locate.unavailable_reason('conformance')}")
    return cmd


def expected_scenarios(suite: str, scenario: str | None) -> tuple[str, ...]:
    """The scenarios a run of ``suite`` (or the single ``scenario``) must report."""
    if scenario is not None:
        return (scenario,)
    if suite == "all":
        return SCENARIOS_ALL
    if suite in ("active", "core"):
        return tuple(s for s in SCENARIOS_ALL if s not in PENDING)
    if suite == "pending":
        return PENDING
    raise ValueError(f"unknown suite {suite!r}: all, active, core or pending")


def run_suite(
    url: str,
    *,
    suite: str = "all",
    scenario: str | None = None,
    revision: str | None = None,
    spec_version: str | None = None,
    out_dir: Path,
    timeout: float = SUITE_TIMEOUT,
) -> SuiteResults:
    """Run ``conformance server --url URL`` with Node 22 and parse every scenario's checks.

    With ``revision`` the 0.2 pre-release runs that revision's frozen requirements
    (``--requirements``, each scenario at that revision's wire version); with ``spec_version``
    it runs the one ``scenario`` at that wire version (``--force``: extension scenarios, such as
    ``sep-2640-*``, are on no revision's timeline); else 0.1.16 runs ``suite`` or ``scenario``. ``out_dir`` must not exist yet or be empty (each run gets its own).
    Raises ``SuiteError`` when the suite times out, crashes, or leaves out a scenario it should
    have run; a scenario that ran but failed is a result, not an error (the suite exits 1 then).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    if any(p.name.startswith("server-") for p in out_dir.iterdir()):
        raise SuiteError(f"{out_dir} holds results of an earlier run; give each run its own directory")
    if revision is not None:
        argv = [*next_suite_cmd(), "server", "--url", url, "-o", str(out_dir), "--requirements", revision]
        expected = revision_scenarios(revision)
    elif spec_version is not None:
        if scenario is None:
            raise ValueError("spec_version runs one scenario: give scenario too")
        argv = [*next_suite_cmd(), "server", "--url", url, "-o", str(out_dir), "--scenario", scenario]
        argv += ["--spec-version", spec_version, "--force"]
        expected = (scenario,)
    else:
        argv = [*suite_cmd(), "server", "--url", url, "-o", str(out_dir)]
        argv += ["--scenario", scenario] if scenario else ["--suite", suite]
        expected = expected_scenarios(suite, scenario)
    env = locate.conformance_env(out_dir / ".home")
    started = time.monotonic()
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, env=env, cwd=out_dir, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        partial = _text(exc.stdout) + _text(exc.stderr)
        running = re.findall(r"=== Running scenario: (\S+) ===", partial)
        raise SuiteError(
            f"conformance suite against {url} did not finish within {timeout:.0f} s"
            f" (stuck in scenario {running[-1] if running else '?'}); output so far:\n"
            f"{partial[-_OUTPUT_TAIL:]}"
        ) from None
    wall = time.monotonic() - started
    output = proc.stdout + proc.stderr
    results = parse_results(out_dir, output)
    missing = [s for s in expected if s not in results]
    if missing or proc.returncode not in (0, 1):
        raise SuiteError(
            f"conformance suite against {url} exited {proc.returncode} and reported no"
            f" result for {missing}; output:\n{output[-_OUTPUT_TAIL:]}"
        )
    return SuiteResults(
        results, url=url, wall_seconds=wall, returncode=proc.returncode, output=output, out_dir=out_dir
    )


def parse_results(out_dir: Path, output: str = "") -> dict[str, ScenarioResult]:
    """``{scenario: ScenarioResult}`` from the ``server-<scenario>-<timestamp>/checks.json`` dirs.

    The suite creates a scenario's dir before running it and writes checks.json after; a dir
    without one means the scenario crashed, which is recorded as one FAILURE check.
    """
    results: dict[str, ScenarioResult] = {}
    for path in sorted(out_dir.iterdir()):
        match = _RESULT_DIR.match(path.name)
        if not match or not path.is_dir():
            continue
        name = match["scenario"]
        checks_file = path / "checks.json"
        if checks_file.is_file():
            checks = load_checks(checks_file)
        else:
            crash = _crash_message(name, output)
            checks = (Check(name, "FAILURE", "scenario crashed before writing checks.json", crash),)
        results[name] = ScenarioResult(name, checks)
    return results


def load_checks(checks_file: Path) -> tuple[Check, ...]:
    """The checks one scenario wrote to its ``checks.json``."""
    raw = json.loads(checks_file.read_text(encoding="utf-8"))
    return tuple(
        Check(str(c["id"]), str(c["status"]), str(c.get("description", "")), c.get("errorMessage")) for c in raw
    )


def _crash_message(name: str, output: str) -> str:
    marker = f"Failed to run scenario {name}"
    at = output.find(marker)
    return output[at : at + 500] if at >= 0 else "no checks.json and no error in the suite's output"


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def differences(expected: Mapping[str, ScenarioResult], actual: Mapping[str, ScenarioResult]) -> list[str]:
    """Every scenario whose judged checks differ (missing, extra, or another status)."""
    out: list[str] = []
    for name in sorted(set(expected) | set(actual)):
        if name not in actual:
            out.append(f"{name}: missing (expected {expected[name].verdict})")
        elif name not in expected:
            out.append(f"{name}: not expected (got {actual[name].verdict})")
        elif expected[name].verdict != actual[name].verdict:
            out.append(
                f"{name}: expected {expected[name].verdict}, got {actual[name].verdict}\n"
                f"{actual[name].describe()}"
            )
    return out


def regressions(baseline: Mapping[str, ScenarioResult], actual: Mapping[str, ScenarioResult]) -> list[str]:
    """What got worse than ``baseline``: a passing scenario that no longer passes, or a check that
    succeeded there and does not here. Improvements (a WARNING turned SUCCESS) are not listed."""
    out: list[str] = []
    for name, base in sorted(baseline.items()):
        got = actual.get(name)
        if got is None:
            out.append(f"{name}: missing")
            continue
        statuses = dict(got.verdict)
        lost = [cid for cid, status in base.verdict if status == "SUCCESS" and statuses.get(cid) != "SUCCESS"]
        if (base.passed and not got.passed) or lost:
            out.append(f"{name}: lost {lost or 'its pass'}\n{got.describe()}")
    return out


# ---- the fixture server -------------------------------------------------------------------------
def fixture_stdio_argv() -> list[str]:
    """argv that runs the conformance fixture over stdio (what clawplane's proxy hosts)."""
    return [sys.executable, str(FIXTURE)]


@contextlib.contextmanager
def fixture_http(log_dir: Path, *, timeout: float = START_TIMEOUT) -> Iterator[str]:
    """Run the fixture over streamable HTTP on a free loopback port; yields ``http://127.0.0.1:N/mcp``.

    Its stderr goes to ``log_dir/conformance-fixture.stderr`` and is quoted if it fails to start.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    stderr_path = log_dir / "conformance-fixture.stderr"
    with stderr_path.open("wb") as stderr:
        proc = subprocess.Popen(
            [*fixture_stdio_argv(), "--http", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        port = _read_ready(proc, timeout, stderr_path)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)


def _read_ready(proc: subprocess.Popen[bytes], timeout: float, stderr_path: Path) -> int:
    line = read_ready(proc, timeout)
    if line.startswith(b"READY "):
        return int(line.split()[1])
    _stop(proc)
    why = stderr_path.read_text(encoding="utf-8", errors="replace")[-_OUTPUT_TAIL:]
    raise SuiteError(
        f"conformance fixture did not print READY within {timeout:.0f} s "
        f"(exit {proc.returncode}, stdout {line!r}); stderr:\n{why}"
    )


_stop = stop_group


# ---- resumability probe -------------------------------------------------------------------------
@dataclass
class SseEvent:
    """One server-sent event."""

    id: str | None = None
    data: str = ""
    retry: int | None = None

    def message(self) -> dict[str, Any] | None:
        """The JSON-RPC message it carries, if any."""
        if not self.data.strip():
            return None
        value = json.loads(self.data)
        return value if isinstance(value, dict) else None


def parse_sse(lines: Iterable[str]) -> Iterator[SseEvent]:
    """Events from SSE lines (``id:``, ``data:``, ``retry:``; a blank line ends an event)."""
    event, seen = SseEvent(), False
    for line in lines:
        if not line:
            if seen:
                yield event
            event, seen = SseEvent(), False
            continue
        key, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if key == "id":
            event.id, seen = value, True
        elif key == "data":
            event.data, seen = (event.data + "\n" + value if event.data else value), True
        elif key == "retry" and value.isdigit():
            event.retry, seen = int(value), True
    if seen:
        yield event


@dataclass
class Resumption:
    """What ``probe_resumption`` saw on the POST stream and on the resumed GET stream."""

    post_status: int
    post_events: list[SseEvent] = field(default_factory=list)
    result_on_post: bool = False
    get_status: int | None = None
    resumed_result: dict[str, Any] | None = None

    @property
    def priming(self) -> SseEvent | None:
        """The first POST event if it is a priming event (an id, empty data)."""
        first = self.post_events[0] if self.post_events else None
        return first if first is not None and first.id and not first.data.strip() else None


PROBE_VERSION = "2025-11-25"


def probe_resumption(
    url: str, *, headers: Mapping[str, str] | None = None, timeout: float = 30.0
) -> Resumption:
    """Call ``test_reconnection`` over a 2025-11-25 session and resume its stream with Last-Event-ID.

    Against a resumable server: the POST stream starts with a priming event (id, empty data,
    ``retry``) and ends without the result; ``GET`` with ``Last-Event-ID`` then delivers it.
    ``headers`` are added to every request (e.g. ``Authorization``).
    """
    base = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        **(headers or {}),
    }
    with httpx.Client(timeout=httpx.Timeout(timeout)) as client:
        init = client.post(
            url,
            headers=base,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROBE_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "clawplane-resumption-probe", "version": "1.0.0"},
                },
            },
        )
        if init.status_code != 200 or "mcp-session-id" not in init.headers:
            raise AssertionError(
                f"initialize answered {init.status_code} {dict(init.headers)}: {init.text[:500]}"
            )
        session = {
            **base,
            "mcp-session-id": init.headers["mcp-session-id"],
            "mcp-protocol-version": PROBE_VERSION,
        }
        done = client.post(
            url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        if done.status_code != 202:
            raise AssertionError(f"notifications/initialized answered {done.status_code}: {done.text[:500]}")
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "test_reconnection", "arguments": {}},
        }
        with client.stream("POST", url, headers=session, json=call) as post:
            probe = Resumption(post_status=post.status_code)
            if post.status_code == 200:
                probe.post_events = list(parse_sse(post.iter_lines()))
        probe.result_on_post = any((e.message() or {}).get("id") == 1 for e in probe.post_events)
        last_id = next((e.id for e in reversed(probe.post_events) if e.id), None)
        if not probe.result_on_post and last_id is not None:
            resume = {**session, "accept": "text/event-stream", "last-event-id": last_id}
            with client.stream("GET", url, headers=resume) as get:
                probe.get_status = get.status_code
                if get.status_code == 200:
                    for event in parse_sse(get.iter_lines()):
                        message = event.message()
                        if message is not None and message.get("id") == 1:
                            probe.resumed_result = message
                            break
        client.delete(url, headers=session)
    return probe
