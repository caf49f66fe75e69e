"""An openclaw.json imported, then rendered: the real OpenClaw sees the same skills, byte for byte.

The tree has every tier OpenClaw finds on its own: bundled (``OPENCLAW_BUNDLED_SKILLS_DIR``),
managed (``<config dir>/skills``), personal (``~/.agents/skills``), workshop (one agent with
``agentDir``, one on OpenClaw's default ``<state>/agents/<id>/agent``), workspace and extra
dirs, plus an agent filter holding ``""`` and skill config keys ``on``/``off`` that gate a
skill through ``requires.config``. The test runs ``clawplane import`` on the original, then
checks that each agent's skills prompt from clawplane equals the prompt OpenClaw's own
``buildSkillSnapshot`` prints for the original config, that ``openclaw config validate``
accepts the rendered openclaw.json, that OpenClaw gives the rendered config the same prompts
again, and that a YAML 1.1 reader reads every imported file as clawplane does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.compat.conftest import require_oracle
from tests.compat.test_skills_world import skill_md
from tests.oracles import locate
from tests.unit.render.build import load_folder

from clawplane.loading.yamlparse import parse_documents

pytestmark = pytest.mark.slow


def _skill(folder: Path, name: str, description: str, extra: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill_md(name, description, extra), encoding="utf-8")


def _requires_config(key: str) -> str:
    return "metadata: " + json.dumps({"openclaw": {"requires": {"config": [key]}}})


LAYOUTS = {
    # name: (config file, OPENCLAW_STATE_DIR, OPENCLAW_HOME) relative to the tree's root
    "default": ("home/.openclaw/openclaw.json", None, None),
    "config-path": ("etc/openclaw/openclaw.json", None, None),
    "state-dir-and-home": ("etc/openclaw/openclaw.json", "state", "ohome"),
}


class Tree:
    """The files of one OpenClaw installation, under ``root``, laid out as ``layout`` says."""

    def __init__(self, root: Path, layout: str) -> None:
        config, state, openclaw_home = LAYOUTS[layout]
        self.root = root
        self.home = root / "home"
        self.openclaw_home = root / openclaw_home if openclaw_home else self.home
        self.state_override = root / state if state else None
        # OpenClaw's state dir (agent dirs) and config dir (managed skills) under this layout.
        self.state = self.state_override or self.openclaw_home / ".openclaw"
        self.config = root / config
        self.config_dir = self.state_override or self.config.parent
        self.bundled = root / "bundled"
        self.ws = root / "ws"
        self.extra = root / "extra"
        self.agent_dir = root / "agentdirs" / "main"
        self.personal = self.state_override is None
        for folder in (self.home, self.openclaw_home, self.state, self.config.parent, self.bundled):
            folder.mkdir(parents=True, exist_ok=True)

    def env(self) -> dict[str, str]:
        env = locate.openclaw_env(self.home, self.config, state_dir=self.state_override,
                                  bundled_skills_dir=self.bundled)
        env["OPENCLAW_HOME"] = str(self.openclaw_home)
        return env

    def populate(self) -> None:
        _skill(self.bundled / "bun", "bun", "Bundled skill.")
        _skill(self.bundled / "shared", "shared", "Shared, bundled copy.")
        _skill(self.config_dir / "skills" / "man", "man", "Managed skill.")
        _skill(self.config_dir / "skills" / "shared", "shared", "Shared, managed copy (beats bundled).")
        # Always written: under OPENCLAW_STATE_DIR the personal tier must stay out.
        _skill(self.home / ".agents/skills/per", "per", "Personal skill.")
        _skill(self.home / ".agents/skills/per-only", "per-only", "Only in the personal tier.")
        _skill(self.agent_dir / "workshop-skills/w-main", "w-main", "Workshop skill of main (agentDir).")
        _skill(self.agent_dir / "workshop-skills/bun", "bun", "Workshop copy of bun (beats bundled).")
        default_shop = self.state / "agents/helper/agent/workshop-skills"
        _skill(default_shop / "w-helper", "w-helper", "Workshop skill of helper (default agent dir).")
        _skill(self.ws / "main/skills/ws-main", "ws-main", "Workspace skill of main.")
        _skill(self.ws / "helper/.agents/skills/proj", "proj", "Project skill of helper.")
        _skill(self.ws / "helper/skills/per", "per", "Workspace copy of per (beats personal).")
        _skill(self.extra / "ext", "ext", "Extra dir skill.")
        _skill(self.openclaw_home / "home-extra/hx", "hx", "Extra dir written with ~ (OPENCLAW_HOME).")
        _skill(self.extra / "on-gated", "on-gated", "Needs config key on.", _requires_config("skills.entries.on-gated.config.on"))
        _skill(self.extra / "off-gated", "off-gated", "Needs config key off.", _requires_config("skills.entries.off-gated.config.off"))
        config = {
            "plugins": {"enabled": False},
            "skills": {
                "load": {"extraDirs": [str(self.extra), "~/home-extra"]},
                "entries": {
                    "on-gated": {"config": {"on": True, "off": False}},
                    "off-gated": {"config": {"on": True, "off": False}},
                    "yes": {"config": {"y": "n", "no": "off"}},
                },
            },
            "agents": {
                "ownership": "explicit",
                "defaults": {"workspace": str(self.ws)},
                "entries": {
                    "main": {
                        "agentDir": str(self.agent_dir),
                        "skills": ["", "bun", "shared", "w-main", "ws-main", "ext", "on-gated", "off-gated", "  "],
                    },
                    "helper": {},
                },
            },
        }
        self.config.write_text(json.dumps(config, indent=2), encoding="utf-8")


def _openclaw_prompt(env: dict[str, str], config: Path, agent: str, cwd: Path) -> str:
    cmd = locate.openclaw_skills_cmd()
    assert cmd is not None
    proc = subprocess.run([*cmd, "--config", str(config), "--agent", agent], env={**env, "OPENCLAW_CONFIG_PATH": str(config)},
                          cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    prompt: str = json.loads(proc.stdout)["prompt"]
    return prompt


def _clawplane(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    run_env = {**env, "PATH": bin_dir + os.pathsep + env["PATH"], "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "clawplane", *args], env=run_env, cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_imported_openclaw_config_gives_every_agent_the_same_skills_prompt(tmp_path: Path, layout: str) -> None:
    require_oracle("openclaw")
    tree = Tree(tmp_path, layout)
    tree.populate()
    env = tree.env()
    work = tmp_path / "work"
    work.mkdir()
    expected = {agent: _openclaw_prompt(env, tree.config, agent, work) for agent in ("main", "helper")}
    # The scenario is only a test if every tier shows up somewhere.
    everything = expected["main"] + expected["helper"]
    for name in ("bun", "man", "w-main", "w-helper", "ws-main", "proj", "ext", "hx", "on-gated"):
        assert f"<name>{name}</name>" in everything, name
    assert ("<name>per-only</name>" in everything) == tree.personal
    assert "<name>off-gated</name>" not in expected["main"]
    assert "Workshop copy of bun" in expected["main"] and "Shared, managed copy" in expected["main"]

    out = tmp_path / "resources"
    proc = _clawplane("import", str(tree.config), "--out", str(out), env=env, cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning[import.blank-skill-name]" in proc.stdout
    assert f"{tree.config}:" in proc.stdout  # diagnostics carry file:line
    for agent, prompt in expected.items():
        mine = _clawplane("skills", "prompt", str(out), "--agent", agent, env=env, cwd=work)
        assert mine.returncode == 0, mine.stdout + mine.stderr
        assert mine.stdout == prompt, f"agent {agent}:\n--- openclaw\n{prompt}\n--- clawplane\n{mine.stdout}"

    for file in out.glob("*.yaml"):
        text = file.read_text(encoding="utf-8")
        ours = [d.data for d in parse_documents(text)]
        assert list(yaml.safe_load_all(text)) == ours, file.name  # YAML 1.1 reads the same

    folder = load_folder(out)
    rendered, diagnostics = folder.render(hosted_urls={})
    assert not [d for d in diagnostics if d.is_error], diagnostics
    # Beside the original, so OpenClaw derives the same folders from its location.
    target = tree.config.parent / "rendered.json"
    target.write_text(json.dumps(rendered, indent=2), encoding="utf-8")
    cli = locate.openclaw_cmd()
    assert cli is not None
    validated = subprocess.run([*cli, "config", "validate", "--json"], env={**env, "OPENCLAW_CONFIG_PATH": str(target)},
                               cwd=work, capture_output=True, text=True, timeout=120, check=False)
    assert validated.returncode == 0 and json.loads(validated.stdout)["valid"], validated.stdout + validated.stderr
    # The rendered file, read in place of the original, gives the same prompts.
    for agent, prompt in expected.items():
        assert _openclaw_prompt(env, target, agent, work) == prompt, agent

