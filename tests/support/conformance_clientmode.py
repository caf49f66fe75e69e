"""Run the conformance suite in client mode against clawplane's MCP client and judge each scenario.

``conformance client --command CMD --scenario S --spec-version V -o DIR`` (0.2 pre-release)
starts the scenario's server and runs ``CMD URL``; CMD is ``tests/support/conformance_client.py``,
which drives clawplane's one client. The scenario writes ``DIR/<scenario>-<timestamp>/checks.json``;
a scenario passes as the server-mode ones do (``ScenarioResult.passed``: at least one SUCCESS,
no FAILURE; SKIPPED checks are what a scenario could not observe) and, here, only if the client
also exited cleanly (the suite says ``CLIENT EXITED WITH ERROR`` otherwise).

One scenario per suite process, one at a time: ``sse-retry`` times the client's reconnect
against the server's ``retry`` field and flakes when other work shares the two cores.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.oracles import locate
from tests.support.conformance import (
    Check,
    ScenarioResult,
    SuiteError,
    load_checks,
    next_suite_cmd,
)

ADAPTER = Path(__file__).resolve().parent / "conformance_client.py"
SCENARIO_TIMEOUT = 60.0
CLIENT_FAILED = "CLIENT EXITED WITH ERROR"
_LISTED = re.compile(r"^\s+- (?P<name>\S+) \[(?P<versions>[^\]]*)\]$")
_OUTPUT_TAIL = 3000


@dataclass(frozen=True)
class ClientRun:
    """One client scenario: its checks, how the suite and the client ended, and how long it took."""

    result: ScenarioResult
    returncode: int
    output: str
    seconds: float

    @property
    def client_failed(self) -> bool:
        """The client exited non-zero (the suite notes it, whatever the checks say)."""
        return CLIENT_FAILED in self.output

    @property
    def passed(self) -> bool:
        """The checks passed and the client ended cleanly."""
        return self.result.passed and not self.client_failed

    def describe(self) -> str:
        """The judged checks, and the end of the suite's output when the client failed."""
        tail = f"\n{self.output[-_OUTPUT_TAIL:]}" if self.client_failed else ""
        return self.result.describe() + tail


def client_scenarios(revision: str) -> tuple[str, ...]:
    """Client scenarios the suite lists for ``revision``, without ``auth/*`` (OAuth, tested apart)."""
    proc = subprocess.run(
        [*next_suite_cmd(), "list"], capture_output=True, text=True, timeout=SCENARIO_TIMEOUT, check=True
    )
    section = proc.stdout.split("Client scenarios", 1)[1].split("\n\n", 1)[0]
    names = []
    for line in section.splitlines():
        match = _LISTED.match(line)
        if match and revision in match["versions"].split(",") and not match["name"].startswith("auth/"):
            names.append(match["name"])
    return tuple(names)


def run_client_scenario(
    scenario: str, revision: str, *, out_dir: Path, timeout: float = SCENARIO_TIMEOUT
) -> ClientRun:
    """Run one client scenario at ``revision`` against the adapter; ``out_dir`` is this run's own."""
    out_dir.mkdir(parents=True, exist_ok=True)
    command = f"{sys.executable} {ADAPTER}"
    argv = [*next_suite_cmd(), "client", "--command", command, "--scenario", scenario]
    argv += ["--spec-version", revision, "-o", str(out_dir)]
    started = time.monotonic()
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env=locate.conformance_env(out_dir / ".home"),
            cwd=out_dir,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SuiteError(f"client scenario {scenario} ({revision}) did not finish within {timeout:.0f} s") from None
    seconds = time.monotonic() - started
    output = proc.stdout + proc.stderr
    found = sorted(out_dir.glob(f"{scenario.replace('/', '-')}-*/checks.json"))
    if found:
        checks = load_checks(found[-1])
    else:
        checks = (Check(scenario, "FAILURE", "no checks.json", output[-_OUTPUT_TAIL:]),)
    return ClientRun(ScenarioResult(scenario, checks), proc.returncode, output, seconds)
