"""The conformance suite's ``auth/*`` client scenarios against clawplane's OAuth client.

``conformance client --scenario auth/… --spec-version V`` (0.2 pre-release) stands up a
protected MCP server and its authorization server(s) and runs the adapter
``tests/support/conformance_client.py URL``, which hands ``auth/*`` scenarios to
``tests.support.conformance_auth``: the product's ``ServerOAuth`` over its
sealed credential store, on ``open_connection`` and the streamable HTTP transport. Every
``auth/*`` scenario the suite scores at 2025-11-25 and 2026-07-28 (not the ``[extension]``
ones) must pass — at least one SUCCESS and no FAILURE in its ``checks.json`` — and so must
the two 2025-03-26 back-compat scenarios, which cost nothing more.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.compat.conftest import require_oracle
from tests.oracles import locate
from tests.support.conformance import Check, ScenarioResult, next_suite_cmd
from tests.support.conformance_clientmode import ADAPTER

pytestmark = [pytest.mark.compat, pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
BOTH = (
    "metadata-default",
    "metadata-var1",
    "metadata-var2",
    "metadata-var3",
    "basic-cimd",
    "scope-from-www-authenticate",
    "scope-from-scopes-supported",
    "scope-omitted-when-undefined",
    "scope-step-up",
    "scope-retry-limit",
    "token-endpoint-auth-basic",
    "token-endpoint-auth-post",
    "token-endpoint-auth-none",
    "pre-registration",
)
SINCE_2026 = (
    "resource-mismatch",
    "offline-access-scope",
    "offline-access-not-supported",
    "authorization-server-migration",
    "iss-supported",
    "iss-not-advertised",
    "iss-supported-missing",
    "iss-wrong-issuer",
    "iss-unexpected",
    "iss-normalized",
    "metadata-issuer-mismatch",
)
SCENARIOS = {
    "2025-03-26": ("2025-03-26-oauth-metadata-backcompat", "2025-03-26-oauth-endpoint-fallback"),
    "2025-11-25": BOTH,
    "2026-07-28": BOTH + SINCE_2026,
}
"""Every ``auth/*`` client scenario of each revision (``conformance list``), extensions aside."""
SCENARIO_TIMEOUT = 120.0
PARALLEL = 2
"""Scenarios run at once: the suite's own ``--suite`` runs all at once and times clients out on 2 cores."""


def _run(revision: str, scenario: str, out_dir: Path) -> ScenarioResult:
    command = f"{sys.executable} {ADAPTER}"
    argv = [*next_suite_cmd(), "client", "--command", command, "--scenario", f"auth/{scenario}",
            "--spec-version", revision, "--timeout", str(int(SCENARIO_TIMEOUT * 1000 / 2)), "-o", str(out_dir)]  # fmt: skip
    env = locate.conformance_env(out_dir / ".home")
    env["PYTHONPATH"] = f"{ROOT / 'operator'}:{ROOT}"
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=SCENARIO_TIMEOUT,
                          check=False)  # fmt: skip
    found = sorted(out_dir.glob(f"auth/{scenario}-*/checks.json"))
    if not found:
        crash = (proc.stdout + proc.stderr)[-2000:]
        return ScenarioResult(scenario, (Check(scenario, "FAILURE", "no checks.json", crash),))
    raw = json.loads(found[-1].read_text(encoding="utf-8"))
    checks = tuple(
        Check(str(c["id"]), str(c["status"]), str(c.get("description", "")), c.get("errorMessage"))
        for c in raw
    )
    return ScenarioResult(scenario, checks)


@pytest.mark.parametrize("revision", sorted(SCENARIOS))
def test_every_auth_scenario_passes(revision: str, tmp_path: Path) -> None:
    """Each of the revision's auth scenarios: at least one SUCCESS, no FAILURE."""
    require_oracle("conformance-next")
    scenarios = SCENARIOS[revision]
    with ThreadPoolExecutor(PARALLEL) as pool:
        results = list(pool.map(lambda s: _run(revision, s, tmp_path / s), scenarios))
    passing = sorted(r.name for r in results if r.passed)
    report = "\n".join(r.describe() for r in results if not r.passed)
    assert passing == sorted(scenarios), report
