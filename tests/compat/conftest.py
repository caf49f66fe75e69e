"""Fixtures that run real third-party tools ("oracles") installed by tests/oracles/install.sh.

Each fixture skips LOUDLY (``ORACLE UNAVAILABLE: ...``) when its tool is missing, and a
banner listing the missing oracles is printed at the end of the run. With
``CLAWPLANE_REQUIRE_ORACLES=1`` (set it in CI) a missing oracle fails the test instead.
Every test under tests/compat gets the ``compat`` marker.

A test that runs a long sequence of OpenClaw processes is marked ``oracle_calls(N)``: just
before it runs, one OpenClaw call is timed, and its timeout becomes N times that cost times
``ORACLE_TIMEOUT_FACTOR`` (never less than the configured default). Each OpenClaw start
takes 2-15 s on a busy 2-core machine, so a fixed timeout either fails under load or hides
a hang for many minutes.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.oracles import locate
from tests.oracles.runners import CodexOracle, OpenClawOracle, OracleRunner, StdioServer
from tests.support import conformance
from tests.support.forwarder import token_forwarder

COMPAT_DIR = Path(__file__).resolve().parent
REQUIRE_ENV = "CLAWPLANE_REQUIRE_ORACLES"
ORACLE_TIMEOUT_FACTOR = 4.0
"""Headroom over the measured cost: the load can rise while the test runs."""
_missing: dict[str, str] = {}


def openclaw_call_cost() -> float | None:
    """Seconds one ``openclaw mcp list --json`` takes right now (None without the oracle)."""
    argv = locate.openclaw_cmd()
    if argv is None or locate.unavailable_reason("openclaw") is not None:
        return None
    with tempfile.TemporaryDirectory(prefix="clawplane-oracle-cost-") as tmp:
        root = Path(tmp)
        config = root / "openclaw.json"
        config.write_text("{}", encoding="utf-8")
        env = locate.openclaw_env(root / "home", config, state_dir=root / "state")
        started = time.monotonic()
        subprocess.run([*argv, "mcp", "list", "--json"], env=env, cwd=root, capture_output=True,
                       timeout=300, check=False)  # fmt: skip
        return time.monotonic() - started


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Give ``oracle_calls(N)`` tests a timeout sized from a call timed just now.

    Runs before pytest-timeout reads the ``timeout`` marker (both are hook wrappers; this
    one is ``tryfirst``).
    """
    marker = item.get_closest_marker("oracle_calls")
    if marker is not None and item.get_closest_marker("timeout") is None:
        cost = openclaw_call_cost()
        if cost is not None:
            default = float(item.config.getini("timeout") or 0)
            budget = max(default, marker.args[0] * cost * ORACLE_TIMEOUT_FACTOR)
            item.add_marker(pytest.mark.timeout(round(budget)))
            item.user_properties.append(("oracle_call_cost_s", round(cost, 2)))
            item.user_properties.append(("timeout_s", round(budget)))
    yield


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test in tests/compat (this hook sees the whole session's items)."""
    for item in items:
        if COMPAT_DIR in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.compat)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _missing:
        return
    terminalreporter.section("ORACLE UNAVAILABLE", sep="!", red=True, bold=True)
    for tool, reason in sorted(_missing.items()):
        terminalreporter.write_line(f"ORACLE UNAVAILABLE: {tool}: {reason}", red=True, bold=True)
    if os.environ.get(REQUIRE_ENV) == "1":
        outcome = f"compat tests using them FAILED ({REQUIRE_ENV}=1)"
    else:
        outcome = f"compat tests using them were SKIPPED (set {REQUIRE_ENV}=1 to fail instead)"
    terminalreporter.write_line(f"{outcome}; {locate.INSTALL_HINT}", red=True)


def require_oracle(tool: str) -> None:
    """Skip (or, under CLAWPLANE_REQUIRE_ORACLES=1, fail) unless ``tool`` is usable."""
    reason = locate.unavailable_reason(tool)
    if reason is None:
        return
    _missing[tool] = reason
    hint = "" if locate.INSTALL_HINT in reason else f" ({locate.INSTALL_HINT})"
    msg = f"ORACLE UNAVAILABLE: {tool}: {reason}{hint}"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{msg} ({REQUIRE_ENV}=1)", pytrace=False)
    pytest.skip(msg)


def openclaw_at(root: Path) -> OpenClawOracle:
    """OpenClaw 2026.9.6 CLI; config at ``<root>/openclaw.json`` (write it first), HOME and state under ``root``."""
    require_oracle("openclaw")
    argv = locate.openclaw_cmd()
    skills_argv = locate.openclaw_skills_cmd()
    batch_argv = locate.openclaw_batch_cmd()
    assert argv is not None and skills_argv is not None and batch_argv is not None
    home = root / "home"
    config = root / "openclaw.json"
    env = locate.openclaw_env(home, config, state_dir=root / "state")
    work = root / "work"
    work.mkdir(parents=True)
    return OpenClawOracle(
        name="openclaw",
        argv=argv,
        env=env,
        cwd=work,
        home=home,
        config_path=config,
        skills_argv=skills_argv,
        batch_argv=batch_argv,
    )


@pytest.fixture
def openclaw(tmp_path: Path) -> OpenClawOracle:
    """OpenClaw 2026.9.6 CLI; config at ``<tmp>/openclaw/openclaw.json`` (write it first)."""
    return openclaw_at(tmp_path / "openclaw")


@pytest.fixture
def openclaw_factory() -> Callable[[Path], OpenClawOracle]:
    """``openclaw_at``: for a test that needs more than one isolated OpenClaw."""
    return openclaw_at


@pytest.fixture
def codex(tmp_path: Path) -> CodexOracle:
    """Codex CLI 0.171.0; ``codex_home`` starts with an empty config.toml."""
    require_oracle("codex")
    argv = locate.codex_cmd()
    assert argv is not None
    root = tmp_path / "codex"
    codex_home = root / "codex-home"
    env = locate.codex_env(root / "home", codex_home)
    oracle = CodexOracle(name="codex", argv=argv, env=env, cwd=root, codex_home=codex_home)
    oracle.write_config("")
    return oracle


@pytest.fixture
def server_everything(tmp_path: Path) -> StdioServer:
    """@modelcontextprotocol/server-everything over stdio (system Node 20)."""
    require_oracle("server-everything")
    argv = locate.server_everything_cmd("stdio")
    assert argv is not None
    env = locate.mcp_peer_env(tmp_path / "mcp-home")
    return StdioServer(command=argv[0], args=argv[1:], env=env)


@pytest.fixture
def inspector_cli(tmp_path: Path) -> OracleRunner:
    """``mcp-inspector --cli`` 0.15.0: ``run(*server_argv, "--method", "tools/list")``."""
    require_oracle("inspector")
    argv = locate.inspector_cli_cmd()
    assert argv is not None
    home = tmp_path / "inspector-home"
    return OracleRunner(name="inspector", argv=argv, env=locate.mcp_peer_env(home), cwd=home)


@pytest.fixture
def kubectl(tmp_path: Path) -> OracleRunner:
    """Real kubectl with isolated HOME, KUBECONFIG (not created) and KUBECACHEDIR."""
    require_oracle("kubectl")
    argv = locate.kubectl_cmd()
    assert argv is not None
    root = tmp_path / "kubectl"
    env = locate.kubectl_env(root / "home", root / "kubeconfig", root / "kube-cache")
    return OracleRunner(name="kubectl", argv=argv, env=env, cwd=root)


SuiteRunner = Callable[..., conformance.SuiteResults]


@pytest.fixture
def conformance_suite(tmp_path: Path) -> SuiteRunner:
    """``run(url, *, token=None, suite="all", scenario=None, revision=None, spec_version=None)``: the MCP
    conformance suite 0.1.16, or with ``revision`` (``2025-11-25``, ``2026-07-28``) the 0.2
    pre-release's frozen requirements of that revision, or with ``spec_version`` its one
    ``scenario`` at that wire version.

    With ``token`` the suite talks to a loopback forwarder that adds ``Authorization: Bearer
    <token>`` to every request (the suite cannot send headers); the forwarder's log is then in
    ``results.forwarded``. Each call gets its own result dir under ``tmp_path``. Compare with
    ``conformance_direct`` via ``conformance.regressions`` (nothing got worse) or
    ``conformance.differences`` (identical checks). It blocks while the suite runs (~2 s): from an
    async test whose server lives in the test's own event loop (the supervisor's hosted endpoint),
    call it as ``await anyio.to_thread.run_sync(lambda: run(url, token=t))``.
    """
    require_oracle("conformance")
    runs = itertools.count(1)

    def run(url: str, *, token: str | None = None, suite: str = "all", scenario: str | None = None,
            revision: str | None = None, spec_version: str | None = None,
            timeout: float = conformance.SUITE_TIMEOUT) -> conformance.SuiteResults:
        out_dir = tmp_path / f"conformance-{next(runs)}"
        if revision is not None or spec_version is not None:
            require_oracle("conformance-next")

        def suite_at(target: str) -> conformance.SuiteResults:
            return conformance.run_suite(target, suite=suite, scenario=scenario, revision=revision,
                                         spec_version=spec_version, out_dir=out_dir,
                                         timeout=timeout)  # fmt: skip

        if token is None:
            return suite_at(url)
        with token_forwarder(url, token) as forwarder:
            results = suite_at(forwarder.url)
        assert forwarder.errors == [], forwarder.errors
        results.forwarded = forwarder.log
        return results

    return run


@pytest.fixture(scope="session")
def conformance_direct(tmp_path_factory: pytest.TempPathFactory) -> conformance.SuiteResults:
    """The suite (``--suite all``) run once per worker directly against the fixture over HTTP:
    the baseline every proxied run is compared with."""
    require_oracle("conformance")
    root = tmp_path_factory.mktemp("conformance-direct")
    with conformance.fixture_http(root) as url:
        return conformance.run_suite(url, out_dir=root / "results")
