"""The SEP-2640 (skills over MCP) server scenarios of the conformance suite against ``/mcp/agents/<agent>``.

A folder with four skills in ``skills.load.extraDirs``; agent ``skilled`` allows three of them,
so its snapshot has three eligible skills (the fourth is filtered out), and the first in
snapshot order has sub-folders (the directory scenario descends into the first skill it
finds). The suite's 0.2 pre-release runs each ``sep-2640-*`` server scenario (``[extension]``,
so ``--force`` at a wire version) through the token forwarder.

At 2026-07-28 every check of the three scenarios succeeds. At 2025-11-25 the suite finds no
``io.modelcontextprotocol/skills`` in the ``initialize`` capabilities, because that revision's
``ServerCapabilities`` has no ``extensions`` member (the SDK leaves it out of the handshake
result), so every SEP-2640 check is SKIPPED; the methods answer in that era too
(``tests/integration/agentep/test_agent_skills.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.compat.conftest import SuiteRunner
from tests.integration.agentep.conftest import endpoint, running, token
from tests.support import conformance

SCENARIOS = ("sep-2640-skills-directory", "sep-2640-skills-enumeration", "sep-2640-skills-manifest")
pytestmark = [pytest.mark.compat, pytest.mark.timeout(len(SCENARIOS) * 2 * 60 + conformance.TEST_TIMEOUT)]

SKILLS = {
    "alpha-forms/SKILL.md": "---\nname: alpha-forms\ndescription: Fill PDF forms\nmetadata:\n"
    "  openclaw:\n    emoji: \"📄\"\n---\n# Forms\n\nSee references/FIELDS.md and run scripts/fill.py.\n",
    "alpha-forms/references/FIELDS.md": "# Fields\n\nname, date, signature\n",
    "alpha-forms/scripts/fill.py": "print('filled')\n",
    "brief-notes/SKILL.md": "---\nname: brief-notes\ndescription: 'Write notes: short ones'\n---\nKeep it short.\n",
    "code-review/SKILL.md": "---\nname: code-review\ndescription: Review a diff\n---\nRead the diff.\n",
    "zeta-hidden/SKILL.md": "---\nname: zeta-hidden\ndescription: Not for this agent\n---\nHidden.\n",
}
RESOURCES = """apiVersion: clawplane.dev/v1alpha1
kind: Gateway
metadata: {name: default}
spec:
  skills: {load: {extraDirs: [./skills]}}
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {name: skilled}
spec: {skills: [alpha-forms, brief-notes, code-review]}
"""


def write_skills(folder: Path) -> None:
    """The four skills of the module docstring under ``folder/skills``."""
    for rel, text in SKILLS.items():
        path = folder / "skills" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@contextlib.contextmanager
def applied_skills(folder: Path) -> Iterator[tuple[str, str]]:
    """The folder written and applied; yields agent ``skilled``'s endpoint URL and token."""
    write_skills(folder)
    (folder / "resources.yaml").write_text(RESOURCES)
    with running(folder) as cli:
        yield f"{endpoint(folder)}/mcp/agents/skilled", token(cli, folder, "agent:skilled")


@pytest.fixture(scope="module")
def skills_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The folder applied; yields agent ``skilled``'s endpoint URL (its ``/mcp`` alias) and token."""
    with applied_skills(tmp_path_factory.mktemp("skills") / "folder") as (url, token):
        yield f"{url}/mcp", token


def test_every_sep_2640_server_check_succeeds_at_2026_07_28(
    conformance_suite: SuiteRunner, skills_endpoint: tuple[str, str]
) -> None:
    url, token = skills_endpoint
    passing, verdicts = [], {}
    for scenario in SCENARIOS:
        results = conformance_suite(url, token=token, scenario=scenario, spec_version="2026-07-28")
        passing += results.passing
        verdicts[scenario] = results[scenario].verdict
        assert {status for _, status in results[scenario].verdict} == {"SUCCESS"}, results.report()
    assert passing == list(SCENARIOS)
    assert len(verdicts["sep-2640-skills-enumeration"]) >= 30
    assert ("sep-2640-directory-read-subdir-mimetype", "SUCCESS") in verdicts["sep-2640-skills-directory"]
    assert ("sep-2640-entry-frontmatter-identical", "SUCCESS") in verdicts["sep-2640-skills-enumeration"]


def test_at_2025_11_25_the_suite_sees_no_extension_and_skips(
    conformance_suite: SuiteRunner, skills_endpoint: tuple[str, str]
) -> None:
    url, token = skills_endpoint
    for scenario in SCENARIOS:
        results = conformance_suite(url, token=token, scenario=scenario, spec_version="2025-11-25")
        judged = {check: status for check, status in results[scenario].verdict if check.startswith("sep-2640-")}
        assert judged and set(judged.values()) == {"SKIPPED"}, results.report()
