"""How much work a plan does, counted, not timed: what a fleet shares is done once.

- N agents whose skill roots and gating inputs are equal gate each skill once;
- a re-plan after one file changed re-renders and re-plans only the resources of that file
  and reuses the rest, and its outputs and changes are exactly those of a cold plan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawplane.planning import planner
from clawplane.reconcile.engine import Engine
from clawplane.render.openclaw import servers as openclaw_servers
from clawplane.skills import gating
from clawplane.state import StateDB
from clawplane.workspace import Workspace

HEAD = "apiVersion: clawplane.dev/v1alpha1\n"
SKILLS, AGENTS, SERVERS = 15, 40, 30


def folder(root: Path) -> Path:
    root.mkdir()
    (root / "gateway.yaml").write_text(
        HEAD + "kind: Gateway\nmetadata:\n  name: default\nspec:\n  skills:\n    load:\n"
        "      extraDirs: [./skills]\n  agents:\n    defaults:\n      workspace: ./ws\n"
    )
    for i in range(SKILLS):
        skill = root / "skills" / f"skill-{i:02d}"
        skill.mkdir(parents=True)
        requires = '\nmetadata: {"openclaw": {"requires": {"bins": ["nope"]}}}' if i % 3 == 0 else ""
        (skill / "SKILL.md").write_text(f"---\nname: skill-{i:02d}\ndescription: Task {i}.{requires}\n---\nB\n")
    docs = [
        HEAD + f"kind: McpServer\nmetadata:\n  name: server-{i:02d}\nspec:\n  enabled: false\n"
        f"  command: node\n  args: [s{i}.js]\n  env:\n    LOG_LEVEL: info\n"
        for i in range(SERVERS)
    ]
    (root / "servers-a.yaml").write_text("---\n".join(docs[: SERVERS // 2]))
    (root / "servers-b.yaml").write_text("---\n".join(docs[SERVERS // 2 :]))
    agents = [
        HEAD + f"kind: Agent\nmetadata:\n  name: agent-{i:02d}\nspec:\n"
        f"  skills: [skill-{i % SKILLS:02d}, skill-{(i + 1) % SKILLS:02d}]\n"
        for i in range(AGENTS)
    ]
    (root / "agents.yaml").write_text("---\n".join(agents))
    return root


class Count:
    """Counts calls of one function, passing them through."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> None:
        self.calls = 0
        real = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)


def test_a_plan_over_many_agents_gates_each_skill_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = folder(tmp_path / "f")
    gated = Count(monkeypatch, gating.Gate, "evaluate")
    ws = Workspace.for_folder(root)
    planned = Engine(ws).plan(StateDB.open(ws.state_dir))
    # Every agent has its own (empty) workspace roots and its own filter, yet one gating input.
    assert gated.calls == SKILLS
    assert len([c for c in planned.plan.changes if c.kind == "Agent"]) == AGENTS


def test_a_replan_rerenders_only_what_changed_and_matches_a_cold_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = folder(tmp_path / "f")
    ws = Workspace.for_folder(root)
    db = StateDB.open(ws.state_dir)
    engine = Engine(ws)
    # The files were written a moment ago: let the caches trust them (they distrust fresh files).
    engine.validation_cache.racy_window_ns = 0
    engine.validation_cache.walk.racy_window_ns = 0
    engine.renderer.engine.cache.racy_window_ns = 0
    engine.plan(db)
    target = root / "servers-b.yaml"
    target.write_text(target.read_text().replace("LOG_LEVEL: info", "LOG_LEVEL: debug", 1))
    rendered = Count(monkeypatch, openclaw_servers, "_server")
    gated = Count(monkeypatch, gating.Gate, "evaluate")
    planned = Count(monkeypatch, planner, "_resource_change")
    warm = engine.plan(db)
    # The changed file's servers are new objects; the other file's servers are reused as rendered.
    assert rendered.calls == SERVERS // 2
    assert gated.calls == 0
    # Only they are planned again: the agents, their skills digests unchanged, keep their changes.
    assert planned.calls == SERVERS // 2
    cold = Engine(ws).plan(db)
    assert warm.outputs == cold.outputs
    assert warm.plan.plan_hash() == cold.plan.plan_hash()
    assert [c.model_dump() for c in warm.plan.changes] == [c.model_dump() for c in cold.plan.changes]
