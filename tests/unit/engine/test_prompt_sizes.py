"""Per-agent prompt sizes for ``clawplane diff``: the engine's count, with skill locations moved."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clawplane.desired import Compiler, DesiredState
from clawplane.planning.prompts import moved, prompt_chars
from clawplane.skills import GatewaySkills, Host, Placed, SkillsEngine
from clawplane.validation import validate_paths

HEAD = "apiVersion: clawplane.dev/v1alpha1\n"
GATEWAY = (
    HEAD
    + "kind: Gateway\nmetadata:\n  name: default\nspec:\n  skills:\n    load:\n      extraDirs: [skills]\n"
)
AGENT = HEAD + "kind: Agent\nmetadata:\n  name: {name}\nspec:\n  skills: [{skills}]\n{extra}"
INLINE = (
    HEAD + "kind: Skill\nmetadata:\n  name: inline-one\nspec:\n  description: Declared inline.\n  body: Hi.\n"
)
HOST = Host(env={}, path="/usr/bin:/bin", platform="linux", home="/nonexistent-home", cwd="/")


def folder(root: Path, budget: int | None = None) -> Path:
    """Two agents, seven skills in a folder, one inline skill; ``budget`` forces a compact catalog."""
    root.mkdir(parents=True)
    (root / "gateway.yaml").write_text(GATEWAY)
    names = [f"skill-{i}" for i in range(7)]
    limits = f"  skillsLimits:\n    maxSkillsPromptChars: {budget}\n" if budget else ""
    (root / "agents.yaml").write_text(
        AGENT.format(name="coder", skills=", ".join([*names, "inline-one"]), extra=limits)
        + "---\n"
        + AGENT.format(name="Writer", skills="skill-1", extra="")
    )
    (root / "skill.yaml").write_text(INLINE)
    for i, name in enumerate(names):
        (root / "skills" / name).mkdir(parents=True)
        (root / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Skill number {i} does <things> & more {'x' * 40 * i}\n---\nBody\n"
        )
    return root


def compiled(root: Path) -> DesiredState:
    result = validate_paths([root])
    assert result.ok, result.diagnostics.sorted()
    return Compiler().compile(result, folder=root)


def engine_chars(desired: DesiredState, state: Path) -> dict[str, int]:
    """``snapshot.prompt.chars`` straight from the skills engine."""
    placed = {
        kind: [Placed(r.resource, r.base_dir) for r in desired.of_kind(kind)]
        for kind in ("Gateway", "Agent", "Skill")
    }
    setup = GatewaySkills.from_resources(placed["Gateway"][0], placed["Agent"], placed["Skill"], state)  # type: ignore[arg-type]
    setup.materialize()
    engine = SkillsEngine()
    return {a: engine.evaluate(setup.inputs_for(a, HOST)[0]).snapshot.prompt.chars for a in desired.agents}


@pytest.mark.parametrize("budget", [None, 1500])
def test_without_relocation_the_size_is_the_engines(tmp_path: Path, budget: int | None) -> None:
    desired = compiled(folder(tmp_path / "cfg", budget))
    ours = prompt_chars(desired, state_dir=tmp_path / "state", host=HOST)
    assert ours == engine_chars(desired, tmp_path / "state")
    assert set(ours) == {"coder", "Writer"} and ours["coder"] > ours["Writer"] > 0
    if budget:
        assert ours["coder"] <= budget


@pytest.mark.parametrize("budget", [None, 1500])
def test_relocated_size_is_the_size_at_the_real_place(tmp_path: Path, budget: int | None) -> None:
    real = folder(tmp_path / "cfg", budget)
    elsewhere = tmp_path / "a-much-longer-temporary-folder-name" / "cfg"
    shutil.copytree(real, elsewhere)
    at_home = prompt_chars(compiled(real), state_dir=tmp_path / "state", host=HOST)
    copied = compiled(elsewhere)
    unmoved = prompt_chars(copied, state_dir=tmp_path / "tmp-state-x", host=HOST)
    relocate = [(str(tmp_path / "tmp-state-x"), str(tmp_path / "state")), (str(elsewhere), str(real))]
    assert prompt_chars(copied, state_dir=tmp_path / "tmp-state-x", relocate=relocate, host=HOST) == at_home
    assert unmoved != at_home  # the longer paths do count


def test_moved_only_matches_whole_folder_names() -> None:
    relocate = [("/tmp/x/from", "/repo")]
    assert moved("/tmp/x/from/cfg/SKILL.md", relocate) == "/repo/cfg/SKILL.md"
    assert moved("/tmp/x/from", relocate) == "/repo"
    assert moved("/tmp/x/fromage/SKILL.md", relocate) == "/tmp/x/fromage/SKILL.md"
