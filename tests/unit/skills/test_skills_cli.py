"""``clawplane skills list|check|prompt`` on a resource folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clawplane.cli.app import app

GATEWAY = """\
apiVersion: clawplane.dev/v1alpha1
kind: Gateway
metadata: {name: default}
spec:
  agents:
    defaults: {workspace: ws}
---
apiVersion: clawplane.dev/v1alpha1
kind: Skill
metadata: {name: inline-one}
spec:
  description: "Inline & <escaped>"
  openclaw: {requires: {bins: [no-such-bin-zz]}}
"""
AGENTS = """\
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {name: main}
spec: {skills: [alpha, inline-one]}
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {name: docs}
spec: {skills: []}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "gateway.yaml").write_text(GATEWAY, encoding="utf-8")
    for agent in ("main", "docs"):
        for name in ("alpha", "beta"):
            skill = tmp_path / "ws" / agent / "skills" / name
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} skill.\n---\n",
                                            encoding="utf-8")
    return tmp_path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout


def test_list_json_has_openclaws_keys(folder: Path) -> None:
    code, out = invoke("skills", "list", str(folder), "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["agentId"] == "main" and doc["workspaceDir"] == f"{folder}/ws"
    first = doc["skills"][0]
    assert list(first)[:12] == ["name", "description", "eligible", "disabled", "blockedByAllowlist",
                                "blockedByAgentFilter", "modelVisible", "userInvocable",
                                "commandVisible", "source", "bundled", "missing"]
    inline = next(s for s in doc["skills"] if s["name"] == "inline-one")
    assert inline["source"] == "openclaw-managed" and inline["reasons"] == ["missing-requirements"]


def test_check_json_summary_and_reasons(folder: Path) -> None:
    (folder / "agents.yaml").write_text(AGENTS, encoding="utf-8")
    code, out = invoke("skills", "check", str(folder), "--agent", "main", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["agentSkillFilter"] == ["alpha", "inline-one"]
    assert doc["summary"] == {"total": 3, "eligible": 2, "modelVisible": 1, "commandVisible": 1,
                              "disabled": 0, "blocked": 0, "agentFiltered": 1, "notInjected": 0,
                              "missingRequirements": 1}
    assert doc["missingRequirements"][0]["missing"]["bins"] == ["no-such-bin-zz"]
    assert doc["prompt"]["skills"] == ["alpha"]


def test_prompt_prints_exactly_the_prompt_text(folder: Path) -> None:
    (folder / "agents.yaml").write_text(AGENTS, encoding="utf-8")
    code, out = invoke("skills", "prompt", str(folder), "--agent", "main")
    assert code == 0
    assert out.startswith("\n\nThe following skills provide") and out.endswith("</available_skills>")
    list_code, listing = invoke("skills", "list", str(folder), "--agent", "main", "--json")
    assert list_code == 0 and json.loads(listing)["prompt"]["chars"] == len(out)


def test_text_output_lists_reasons(folder: Path) -> None:
    (folder / "agents.yaml").write_text(AGENTS, encoding="utf-8")
    code, out = invoke("skills", "check", str(folder), "--agent", "docs")
    assert code == 0 and "alpha: agent-filter" in out
    code, out = invoke("skills", "list", str(folder), "--agent", "docs")
    assert code == 0 and "Skills for agent docs (0/3 ready)" in out


def test_agent_selection_errors(folder: Path) -> None:
    (folder / "agents.yaml").write_text(AGENTS, encoding="utf-8")
    assert invoke("skills", "list", str(folder))[0] == 1  # two agents, none named
    assert invoke("skills", "check", str(folder), "--agent", "nobody")[0] == 1
    assert invoke("skills", "prompt", str(folder))[0] == 2  # --agent is required


def test_invalid_resources_exit_1(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("apiVersion: clawplane.dev/v1alpha1\nkind: Agent\n",
                                       encoding="utf-8")
    assert invoke("skills", "list", str(tmp_path))[0] == 1
