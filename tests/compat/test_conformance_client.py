"""clawplane's MCP client against the conformance suite's client scenarios, at both revisions.

The suite (0.2 pre-release) starts each scenario's server and runs
``tests/support/conformance_client.py URL``, which drives the product's one client
(``runtimes.client.connection.open_connection``, as the supervisor, the aggregated endpoint and
``clawplane mcp probe`` use it). Every client scenario the suite lists for the revision, except
``auth/*`` (OAuth, tested on its own), must pass: at least one SUCCESS, no FAILURE, and the
client exited cleanly. The list is pinned, so a scenario the suite adds shows up here.
Scenarios run one at a time (``sse-retry`` times the client's reconnect).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.compat.conftest import require_oracle
from tests.support.conformance_clientmode import client_scenarios, run_client_scenario

pytestmark = [pytest.mark.compat, pytest.mark.timeout(600)]

CLIENT_PASSING = {
    "2025-11-25": (
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "json-schema-2020-12-preservation",
    ),
    "2026-07-28": (
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "json-schema-2020-12-preservation",
    ),
}
"""Every non-OAuth client scenario of each revision, in the suite's order; all pass."""


@pytest.mark.parametrize("revision", sorted(CLIENT_PASSING))
def test_client_scenarios_pass(revision: str, tmp_path: Path) -> None:
    """Each client scenario of ``revision`` passes against clawplane's client."""
    require_oracle("conformance-next")
    assert client_scenarios(revision) == CLIENT_PASSING[revision]
    runs = {
        name: run_client_scenario(name, revision, out_dir=tmp_path / name.replace("/", "-"))
        for name in CLIENT_PASSING[revision]
    }
    failed = [run.describe() for run in runs.values() if not run.passed]
    assert [name for name, run in runs.items() if run.passed] == list(CLIENT_PASSING[revision]), "\n".join(
        failed
    )
