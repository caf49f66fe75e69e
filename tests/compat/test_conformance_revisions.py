"""The suite's frozen requirements of 2025-11-25 and 2026-07-28 (0.2 pre-release) through clawplane.

``conformance server --requirements REVISION`` runs each scenario at that revision's wire
version: the handshake era for 2025-11-25, per-request ``_meta`` envelopes without sessions for
2026-07-28 (``server-stateless`` probes unknown versions, removed methods, header mismatches and
listen streams). The conformance fixture is run directly once per revision; every scenario that
passes there must pass behind ``clawplane bridge``, behind a folder's hosted endpoint, and — the
scenarios that do not call the fixture's tools or prompts by their own names — behind an agent's
aggregated endpoint. The fixture implements 0.1.16's scenarios plus ``server-stateless``'s and
``http-custom-header-server-validation``'s tools: those the 0.2 suite added for 2026-07-28 that
need tools it lacks (most ``input-required-result-*``, tasks) fail directly and so are not
required through; ``DIRECT_PASSING`` pins what passes directly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.compat.conftest import SuiteRunner, require_oracle
from tests.compat.test_conformance_agent_endpoint import agent_endpoint  # noqa: F401 (a fixture)
from tests.compat.test_conformance_proxy import bridged, hosted
from tests.fixtures.servers.helpers import TOKEN
from tests.support import conformance

SUITE_TIMEOUT = 300.0
"""Behind the proxy every 2025-11-25 scenario's session starts a fixture process of its own
(perClient, ~1-5 s each on a loaded 2-core box); 2026-07-28 has no sessions."""
pytestmark = [pytest.mark.compat, pytest.mark.timeout(3 * SUITE_TIMEOUT)]

DIRECT_PASSING = {
    "2025-11-25": frozenset({
        "completion-complete", "dns-rebinding-protection", "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums", "json-schema-2020-12", "logging-set-level", "ping",
        "prompts-get-embedded-resource", "prompts-get-simple", "prompts-get-with-args",
        "prompts-get-with-image", "prompts-list", "resources-list", "resources-read-binary",
        "resources-read-text", "resources-subscribe", "resources-templates-read",
        "resources-unsubscribe", "server-initialize", "server-session-lifecycle",
        "server-sse-multiple-streams", "server-sse-polling", "tools-call-audio",
        "tools-call-elicitation", "tools-call-embedded-resource", "tools-call-error",
        "tools-call-image", "tools-call-mixed-content", "tools-call-sampling",
        "tools-call-simple-text", "tools-call-with-logging", "tools-call-with-progress",
        "tools-list",
    }),
    "2026-07-28": frozenset({
        "caching", "completion-complete", "dns-rebinding-protection", "http-custom-header-server-validation",
        "http-header-validation",
        "input-required-result-ignore-extra-params", "input-required-result-missing-input-response",
        "input-required-result-unsupported-methods", "input-required-result-validate-input",
        "prompts-get-embedded-resource", "prompts-get-simple", "prompts-get-with-args",
        "prompts-get-with-image", "prompts-list", "resources-list", "resources-read-binary",
        "resources-read-text", "resources-templates-read", "sep-2164-resource-not-found",
        "server-sse-multiple-streams", "server-stateless", "tools-call-audio", "tools-call-embedded-resource",
        "tools-call-error", "tools-call-image", "tools-call-mixed-content",
        "tools-call-simple-text", "tools-call-with-progress", "tools-list",
    }),
}
"""What the fixture passes directly (at least one SUCCESS, no FAILURE)."""

RENAMED_ON_AGENT_ENDPOINT = ("tools-call-", "prompts-get-", "elicitation-", "input-required-result-")
"""Prefixes of scenarios that call a fixture tool or prompt by its own name (on an agent endpoint
it is ``conformance__<name>``); ``completion-complete``, ``json-schema-2020-12``,
``server-sse-polling`` and ``server-stateless`` do too (the last only in ``NAMED_TOOL_CHECKS``)."""
ALSO_RENAMED = ("completion-complete", "json-schema-2020-12", "server-sse-polling", "server-stateless")
NAMED_TOOL_CHECKS = frozenset({
    "sep-2575-server-rejects-undeclared-capability", "sep-2575-missing-capability-http-400",
    "sep-2575-http-server-no-independent-requests-on-stream", "sep-2575-server-no-log-without-loglevel",
})  # fmt: skip
"""The checks of ``server-stateless`` that call a fixture tool by name; the rest (version
negotiation, removed methods, headers, listen streams) must succeed on an agent endpoint too."""


@pytest.fixture(scope="module", params=conformance.REVISIONS)
def revision(request: pytest.FixtureRequest) -> str:
    """Each revision whose requirements are run."""
    require_oracle("conformance-next")
    return str(request.param)


_direct: dict[str, conformance.SuiteResults] = {}


def _direct_run(revision: str, tmp_path_factory: pytest.TempPathFactory) -> conformance.SuiteResults:
    if revision not in _direct:
        root = tmp_path_factory.mktemp(f"conformance-direct-{revision}")
        with conformance.fixture_http(root) as url:
            _direct[revision] = conformance.run_suite(url, revision=revision, out_dir=root / "results",
                                                      timeout=SUITE_TIMEOUT)  # fmt: skip
    return _direct[revision]


@pytest.fixture
def direct(revision: str, tmp_path_factory: pytest.TempPathFactory) -> conformance.SuiteResults:
    """The revision's requirements run directly against the fixture over HTTP (once per revision)."""
    return _direct_run(revision, tmp_path_factory)


STDIO_CANNOT = {"server-sse-polling": ("server-sse-retry-field", "server-sse-disconnect-resume")}
"""Checks that succeed only against an HTTP server that closes a stream mid-call and names the
retry interval (the fixture's ``ctx.close_sse_stream()``, its transport's ``retry``): a stdio
server has no stream to close and no retry to name, so the proxy sends the result on the open
stream (its priming event still lets a client resume). The scenario itself passes through."""


def _like_direct(direct: conformance.SuiteResults, through: conformance.SuiteResults) -> None:
    assert set(direct.passing) <= set(through.passing), through.report()
    unexpected = []
    for line in conformance.regressions(direct, through):
        name = line.split(":", 1)[0]
        if not line.startswith(f"{name}: lost {list(STDIO_CANNOT.get(name, ()))}\n"):
            unexpected.append(line)
    assert unexpected == [], through.report()
    assert through.forwarded is not None and all(f.status < 500 for f in through.forwarded)


def test_the_fixture_passes_what_it_implements_directly(direct: conformance.SuiteResults, revision: str) -> None:
    assert set(direct) == set(conformance.revision_scenarios(revision)), direct.report()
    assert set(direct.passing) == DIRECT_PASSING[revision], direct.report()


def test_every_scenario_passing_directly_passes_behind_the_bridge(
    direct: conformance.SuiteResults, conformance_suite: SuiteRunner, revision: str, tmp_path: Path
) -> None:
    with bridged(tmp_path) as url:
        _like_direct(direct, conformance_suite(url, token=TOKEN, revision=revision, timeout=SUITE_TIMEOUT))


def test_every_scenario_passing_directly_passes_behind_the_hosted_endpoint(
    direct: conformance.SuiteResults, conformance_suite: SuiteRunner, revision: str, tmp_path: Path
) -> None:
    with hosted(tmp_path) as (url, token):
        _like_direct(direct, conformance_suite(url, token=token, revision=revision, timeout=SUITE_TIMEOUT))


def test_every_scenario_that_applies_passes_behind_an_agent_endpoint(
    direct: conformance.SuiteResults,
    conformance_suite: SuiteRunner,
    revision: str,
    agent_endpoint: tuple[str, str],  # noqa: F811 (the imported fixture)
) -> None:
    url, token = agent_endpoint
    through = conformance_suite(url, token=token, revision=revision, timeout=SUITE_TIMEOUT)
    applies = {s for s in direct.passing if not s.startswith(RENAMED_ON_AGENT_ENDPOINT) and s not in ALSO_RENAMED}
    assert applies <= set(through.passing), through.report()
    if "server-stateless" in direct:
        succeeded = {cid for cid, status in through["server-stateless"].verdict if status == "SUCCESS"}
        lost = {cid for cid, status in direct["server-stateless"].verdict if status == "SUCCESS"} - succeeded
        assert lost <= NAMED_TOOL_CHECKS, through["server-stateless"].describe()
    assert through.forwarded is not None and all(f.status < 500 for f in through.forwarded)
