"""The official MCP conformance suite (0.1.16, ``server --suite all``) against our conformance fixture.

(a) directly over streamable HTTP, and through the test-side token forwarder, which must not change
a single check (the proxy tests, which need the forwarder for their tokens, rely on that).
The proxy's own runs (behind ``clawplane bridge`` and the supervisor's hosted endpoint) use the
``conformance_suite`` and ``conformance_direct`` fixtures from conftest.py.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from tests.compat.conftest import SuiteRunner, require_oracle
from tests.oracles import locate
from tests.support import conformance

pytestmark = pytest.mark.timeout(conformance.TEST_TIMEOUT)


def test_installed_suite_is_the_pinned_one(tmp_path: Path) -> None:
    """The scenario list the harness expects is the one the installed suite runs."""
    require_oracle("conformance")
    env = locate.conformance_env(tmp_path / "home")
    run = conformance.suite_cmd()
    version = subprocess.run(
        [*run, "--version"], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    assert version.stdout.strip() == locate.pins()["CONFORMANCE_VERSION"] == "0.1.16"
    listing = subprocess.run([*run, "list"], capture_output=True, text=True, env=env, timeout=60, check=True)
    server_part = listing.stdout.split("Client scenarios")[0]
    assert tuple(re.findall(r"^  - (\S+) \[", server_part, flags=re.MULTILINE)) == conformance.SCENARIOS_ALL


def test_fixture_passes_every_scenario_directly(conformance_direct: conformance.SuiteResults) -> None:
    results = conformance_direct
    assert list(results) == sorted(conformance.SCENARIOS_ALL), results.report()
    assert results.passing == list(conformance.DIRECT_PASSING), results.report()
    # The one scenario without a success cannot have one against an SDK server (SSE_POLLING_NOTE);
    # pin its exact outcome so a change in either direction shows.
    polling = results["server-sse-polling"]
    assert polling.verdict == conformance.SSE_POLLING_VERDICT, conformance.SSE_POLLING_NOTE
    assert results.totals() == {"SUCCESS": 44, "FAILURE": 0, "WARNING": 2, "INFO": 6}, results.report()
    assert results.returncode == 0  # the suite's own verdict agrees


def test_forwarder_changes_no_check(
    conformance_direct: conformance.SuiteResults, conformance_suite: SuiteRunner, tmp_path: Path
) -> None:
    with conformance.fixture_http(tmp_path) as url:
        through = conformance_suite(url, token="conformance-token")
    assert conformance.differences(conformance_direct, through) == [], through.report()
    assert conformance.regressions(conformance_direct, through) == []
    assert through.passing == list(conformance.DIRECT_PASSING)
    # Every request really went through the forwarder and carried the token.
    log = through.forwarded
    assert log is not None and len(log) > len(conformance.SCENARIOS_ALL) * 2
    assert {f.method for f in log} >= {"POST", "GET"}
    assert {f.authorization for f in log} == {"Bearer conformance-token"}
    # The dns-rebinding scenario's foreign Host reached the fixture and was refused there.
    assert [f.status for f in log if f.status >= 400] == [421]
