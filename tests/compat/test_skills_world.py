"""Harness for the skills differential suite: one file tree, two engines, one comparison.

A ``World`` is a temporary tree with a home, an OpenClaw state dir (its config
and managed skills), a bundled dir, workspaces and skill folders. The scenario
is written in clawplane terms (a Gateway spec, Agent specs, inline Skills);
``World.openclaw_config`` translates it to the ``openclaw.json`` that means the
same. ``World.compare`` runs OpenClaw 2026.9.6 (``openclaw_skills.mjs`` for the
prompt snapshot, ``openclaw skills list/check --json`` for eligibility) and
clawplane (resources → ``GatewaySkills`` → ``SkillsEngine``) and returns every
difference in prompt text, eligibility, flags, missing requirements, install
options and skip reasons. This module holds no tests.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.oracles import locate

from clawplane.diagnostics import Diagnostic
from clawplane.models import Agent, Gateway, Skill
from clawplane.skills import AgentSnapshot, GatewaySkills, Host, Placed, SkillsEngine, SkillsInputs
from clawplane.skills.report import check_document, list_document

API = "clawplane.dev/v1alpha1"
LIST_KEYS = ("name", "description", "emoji", "eligible", "disabled", "blockedByAllowlist",
             "blockedByAgentFilter", "modelVisible", "userInvocable", "commandVisible", "source",
             "bundled", "primaryEnv", "homepage", "missing")
CHECK_KEYS = ("summary", "eligible", "modelVisible", "commandVisible", "disabled", "blocked",
              "agentFiltered", "notInjected", "missingRequirements", "workspaceDir",
              "agentSkillFilter")
_ESCAPE = re.compile(r"Skipping escaped skill path outside its configured root: .*?reason=(\S+).*?"
                     r"requested=(\S+) resolved=(\S+)")
_INVALID = re.compile(r"Skipping invalid skill: file=(\S+) error=(.*)$")
_COLLISION = re.compile(r'Skill precedence collision: skill="(.*)" winner=(\S+) loser=(\S+)')


def skill_md(name: str | None, description: str | None, extra: str = "", body: str = "# Body\n") -> str:
    """A SKILL.md with plain ``name``/``description`` lines and any ``extra`` frontmatter lines."""
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    if extra:
        lines.append(extra.rstrip("\n"))
    lines.append("---")
    return "\n".join(lines) + "\n" + body


@dataclass
class World:
    """A scenario's file tree and its clawplane resources."""

    root: Path
    gateway: dict[str, Any] = field(default_factory=dict)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    skills: dict[str, dict[str, Any]] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    openclaw_extra: dict[str, Any] = field(default_factory=dict)
    adjust: Callable[[SkillsInputs], SkillsInputs] | None = None
    """Changes clawplane's engine inputs (for roots the resources cannot express)."""

    def __post_init__(self) -> None:
        for sub in ("home", "state", "bundled", "folder"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def managed(self) -> Path:
        return self.state / "skills"

    @property
    def personal(self) -> Path:
        return self.home / ".agents" / "skills"

    @property
    def bundled(self) -> Path:
        return self.root / "bundled"

    @property
    def folder(self) -> Path:
        return self.root / "folder"

    def write(self, path: Path | str, text: str) -> Path:
        target = self.root / path if not Path(path).is_absolute() else Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def skill(self, folder: Path | str, name: str | None, description: str | None,
              extra: str = "", body: str = "# Body\n") -> Path:
        """Write ``<folder>/SKILL.md``."""
        base = self.root / folder if not Path(folder).is_absolute() else Path(folder)
        return self.write(base / "SKILL.md", skill_md(name, description, extra, body))

    # -- the two configurations ------------------------------------------------------------
    def gateway_spec(self) -> dict[str, Any]:
        spec = json.loads(json.dumps(self.gateway))
        roots = spec.setdefault("skills", {}).setdefault("roots", {})
        roots.setdefault("bundled", str(self.bundled))
        roots.setdefault("personal", str(self.personal))
        if not self.skills:
            roots.setdefault("managed", str(self.managed))
        return spec

    def openclaw_config(self) -> dict[str, Any]:
        """The openclaw.json equivalent of the Gateway and Agents."""
        spec = self.gateway_spec()
        skills = dict(spec.get("skills", {}))
        skills.pop("roots", None)
        cfg: dict[str, Any] = {"plugins": {"enabled": False}}
        if skills:
            cfg["skills"] = skills
        defaults = spec.get("agents", {}).get("defaults", {})
        agents: dict[str, Any] = {}
        if defaults:
            agents["defaults"] = defaults
        if self.agents:
            agents["entries"] = {k: dict(v) for k, v in self.agents.items()}
            if len(self.agents) > 1:
                agents["ownership"] = "explicit"
        if agents:
            cfg["agents"] = agents
        for key, value in {**spec.get("config", {}), **self.openclaw_extra}.items():
            cfg[key] = value
        return cfg

    def write_resources(self) -> None:
        docs: list[dict[str, Any]] = [
            {"apiVersion": API, "kind": "Gateway", "metadata": {"name": "default"},
             "spec": self.gateway_spec()}]
        docs += [{"apiVersion": API, "kind": "Agent", "metadata": {"name": k}, "spec": v}
                 for k, v in self.agents.items()]
        docs += [{"apiVersion": API, "kind": "Skill", "metadata": {"name": k}, "spec": v}
                 for k, v in self.skills.items()]
        # JSON documents are YAML documents.
        text = "\n---\n".join(json.dumps(doc, ensure_ascii=False) for doc in docs)
        (self.folder / "resources.yaml").write_text(text + "\n", encoding="utf-8")

    def oracle_env(self) -> dict[str, str]:
        config = self.state / "openclaw.json"
        return locate.openclaw_env(self.home, config, bundled_skills_dir=self.bundled,
                                   extra=self.env)

    # -- running -----------------------------------------------------------------------------
    def setup(self) -> GatewaySkills:
        self.write_resources()
        gateway = Gateway.model_validate({"apiVersion": API, "kind": "Gateway",
                                          "metadata": {"name": "default"},
                                          "spec": self.gateway_spec()})
        agents = [Placed(Agent.model_validate({"apiVersion": API, "kind": "Agent",
                                               "metadata": {"name": k}, "spec": v}), self.folder)
                  for k, v in self.agents.items()]
        skills = [Placed(Skill.model_validate({"apiVersion": API, "kind": "Skill",
                                               "metadata": {"name": k}, "spec": v}), self.folder)
                  for k, v in self.skills.items()]
        setup = GatewaySkills.from_resources(Placed(gateway, self.folder), agents, skills,
                                             self.folder / ".clawplane")
        setup.materialize()
        if self.skills:
            self.managed.parent.mkdir(parents=True, exist_ok=True)
            if not self.managed.is_symlink():
                # OpenClaw's one managed dir is clawplane's inline-skills dir: managed skills are
                # known by their real path on both sides, so locations compare equal.
                self.managed.symlink_to(setup.inline_dir, target_is_directory=True)
        return setup

    def host(self) -> Host:
        env = self.oracle_env()
        return Host(env=env, path=env["PATH"], platform="linux", home=str(self.home),
                    cwd=str(self.root / "work"))

    def clawplane(self, agent_id: str, setup: GatewaySkills,
                  engine: SkillsEngine | None = None) -> tuple[AgentSnapshot, list[Diagnostic]]:
        inputs, problems = setup.inputs_for(agent_id, self.host())
        if self.adjust is not None:
            inputs = self.adjust(inputs)
        result = (engine or SkillsEngine()).evaluate(inputs)
        return result.snapshot, [*problems, *result.diagnostics]

    def openclaw_runs(self, agent_ids: Iterable[str]) -> dict[str, OracleRun]:
        """What OpenClaw prints for each agent: its skills snapshot, ``skills list`` and ``check``.

        The CLI calls of every agent run in one OpenClaw process (openclaw_batch.mjs: each
        call through OpenClaw's own CLI entry), beside one snapshot process per agent: a CLI
        start costs ~3 CPU-s here, a later call in the same process a fraction of that.
        """
        agents = list(dict.fromkeys(agent_ids))
        # OpenClaw's SQLite state (plugin index and config-health caches, nothing skills read)
        # goes between rounds: once it exists, each start reads it through ~8 helper processes
        # (3x the CPU of a first run). The managed skills dir beside it stays.
        shutil.rmtree(self.state / "state", ignore_errors=True)
        config = self.state / "openclaw.json"
        config.write_text(json.dumps(self.openclaw_config(), indent=2), encoding="utf-8")
        env = self.oracle_env()
        work = self.root / "work"
        work.mkdir(exist_ok=True)
        batch, skills_cmd = locate.openclaw_batch_cmd(), locate.openclaw_skills_cmd()
        assert batch is not None and skills_cmd is not None
        calls = [(agent, kind) for agent in agents for kind in ("list", "check")]
        spec = work / "skills-calls.json"
        spec.write_text(json.dumps({"calls": [
            {"args": ["skills", kind, "--json", "--agent", agent]} for agent, kind in calls
        ]}), encoding="utf-8")  # fmt: skip
        procs = {
            agent: subprocess.Popen([*skills_cmd, "--config", str(config), "--agent", agent], env=env,
                                    cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for agent in agents
        }  # fmt: skip
        cli = subprocess.run([*batch, str(spec)], env=env, cwd=work, capture_output=True, text=True,
                             timeout=100 + 10 * len(calls), check=False)  # fmt: skip
        if cli.returncode != 0:
            raise AssertionError(f"openclaw_batch.mjs failed ({cli.returncode}):\n{cli.stderr}")
        printed: dict[tuple[str, str], Any] = {}
        for (agent, kind), result in zip(calls, json.loads(cli.stdout), strict=True):
            if result["returncode"] != 0:
                raise AssertionError(f"openclaw skills {kind} --agent {agent} failed "
                                     f"({result['returncode']}):\n{result['stderr']}\n{result['stdout']}")  # fmt: skip
            printed[agent, kind] = json.loads(result["stdout"])
        runs: dict[str, OracleRun] = {}
        for agent, proc in procs.items():
            out, err = proc.communicate(timeout=100)
            if proc.returncode != 0:
                raise AssertionError(f"openclaw snapshot --agent {agent} failed ({proc.returncode}):\n{err}\n{out}")
            runs[agent] = OracleRun(json.loads(out), printed[agent, "list"], printed[agent, "check"], err)
        return runs


@dataclass(frozen=True)
class OracleRun:
    """What OpenClaw printed for one agent."""

    snapshot: dict[str, Any]
    listing: dict[str, Any]
    check: dict[str, Any]
    stderr: str

    def skip_reasons(self, home: Path) -> set[tuple[str, str]]:
        """``(reason, path)`` for every escape, invalid skill and collision OpenClaw logged."""
        found: set[tuple[str, str]] = set()
        for line in self.stderr.splitlines():
            line = re.sub(r"\x1b\[[0-9;]*m", "", line)
            if m := _ESCAPE.search(line):
                found.add((m.group(1), _home_path(m.group(2), home)))
            elif m := _INVALID.search(line):
                found.add((_error_word(m.group(2)), _home_path(m.group(1), home)))
            elif m := _COLLISION.search(line):
                found.add(("collision", m.group(1)))
        return found


def _home_path(path: str, home: Path) -> str:
    return str(home) + path[1:] if path.startswith("~/") else path


def _error_word(error: str) -> str:
    if error.startswith("invalid frontmatter"):
        return "invalid-frontmatter"
    return error.strip()


_CODE_WORDS = {
    "skills.symlink-escape": "symlink-escape",
    "skills.path-escape": "path-escape",
    "skills.bundled-symlink-escape": "bundled-symlink-escape",
    "skills.bundled-root-escape": "bundled-root-escape",
    "skills.invalid-frontmatter": "invalid-frontmatter",
}
_INVALID_CODES = ("skills.missing-description", "skills.missing-name", "skills.hardlinked",
                  "skills.file-too-large", "skills.not-a-file")


def clawplane_skip_reasons(diags: Iterable[Diagnostic]) -> set[tuple[str, str]]:
    """The same ``(reason, path)`` view of clawplane's diagnostics."""
    found: set[tuple[str, str]] = set()
    for d in diags:
        file = d.location.file if d.location else ""
        if d.code in _CODE_WORDS:
            found.add((_CODE_WORDS[d.code], file))
        elif d.code in _INVALID_CODES:
            found.add((d.message, file))
        elif d.code == "skills.collision":
            found.add(("collision", d.message.split('"')[1]))
    return found


def _pick(entry: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    return {k: entry[k] for k in keys if k in entry}


def compare(world: World, agent_id: str, setup: GatewaySkills, oracle: OracleRun,
            *, reasons: bool = True) -> list[str]:
    """Every difference between OpenClaw (``oracle``, from ``World.openclaw_runs``) and clawplane
    for one agent (empty when identical)."""
    ours, diags = world.clawplane(agent_id, setup)
    problems: list[str] = []

    def differ(what: str, theirs: Any, mine: Any) -> None:
        if theirs != mine:
            problems.append(f"{what}:\n  openclaw:  {theirs!r}\n  clawplane: {mine!r}")

    snap = oracle.snapshot
    differ("prompt text", snap["prompt"], ours.prompt.text)
    differ("prompt length", snap["promptLength"], ours.prompt.chars)
    differ("skills in prompt", [s["name"] for s in snap["resolvedSkills"]], list(ours.prompt.skills))
    prompt_eligible = [s.name for s in ours.skills if s.prompt_eligible and not s.blocked_by_agent_filter]
    differ("snapshot skills (eligible for the agent)", [s["name"] for s in snap["skills"]], prompt_eligible)
    differ("workspace", snap["workspaceDir"], ours.workspace_dir)
    mine_list = list_document(ours, diags)
    differ("skills list", [_pick(e, LIST_KEYS) for e in oracle.listing["skills"]],
           [_pick(e, LIST_KEYS) for e in mine_list["skills"]])
    mine_check = check_document(ours, diags)
    differ("skills check", _pick(oracle.check, CHECK_KEYS), _pick(mine_check, CHECK_KEYS))
    if reasons:
        differ("skip reasons", sorted(oracle.skip_reasons(world.home)),
               sorted(clawplane_skip_reasons(diags)))
    return problems


def link(target: Path, at: Path) -> Path:
    """A symlink ``at`` → ``target`` (parents created)."""
    at.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, at, target_is_directory=target.is_dir())
    return at
