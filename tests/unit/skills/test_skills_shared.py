"""Agents that share roots and gating inputs share one gating pass, and get the same bytes as alone.

These are the regression guards of the fleet speed-up: they count work instead of timing it.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import pytest
from tests.unit.skills.skilltree import FAR_FUTURE_NS, Tree

from clawplane.skills import (
    AgentSnapshot,
    AgentView,
    EntrySettings,
    FsCache,
    Host,
    SkillRoot,
    SkillsEngine,
    SkillsInputs,
    SkillsSettings,
    Source,
)
from clawplane.skills import gating as gating_mod
from clawplane.skills.snapshot import hash_body

SKILLS = 12
AGENTS = 30


class GateCalls:
    """Counts ``Gate.evaluate`` calls, the unit of gating work."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = gating_mod.Gate.evaluate

        def counted(gate: gating_mod.Gate, record: Any) -> gating_mod.SkillGating:
            self.count += 1
            return real(gate, record)

        monkeypatch.setattr(gating_mod.Gate, "evaluate", counted)


def build(tree: Tree) -> None:
    for i in range(SKILLS):
        extra = f'metadata: {{"openclaw": {{"requires": {{"bins": ["tool{i % 3}"]}}}}}}' if i % 4 == 0 else ""
        if i == 5:
            extra = "disable-model-invocation: true"
        tree.skill(f"shared/s{i:02d}", description=f"Skill number {i} — ünïcode too.", extra=extra)
    tree.skill("own/only-one", description="Only agent-03 has this root.")


def host(tree: Tree) -> Host:
    return Host(env=MappingProxyType({"HOME": tree.path("home")}), path="/usr/bin:/bin", platform="linux",
                home=tree.path("home"), cwd=str(tree.root))


def inputs(tree: Tree, agent: int, the_host: Host, settings: SkillsSettings | None = None) -> SkillsInputs:
    roots = [SkillRoot(tree.path("shared"), Source.EXTRA)]
    # Every agent has workspace roots of its own; they are empty except agent-03's.
    workspace = tree.path("own") if agent == 3 else tree.path(f"ws/agent-{agent:02d}")
    roots.append(SkillRoot(workspace, Source.WORKSPACE))
    picks = None if agent % 5 == 0 else tuple(f"s{(agent + k) % SKILLS:02d}" for k in range(3))
    return SkillsInputs(
        roots=tuple(roots), settings=settings or SkillsSettings(),
        agent=AgentView(f"agent-{agent:02d}", skill_filter=picks, workspace_dir=workspace),
        host=the_host, config={"browser": {"enabled": True}},
    )


def fresh_engine(*, in_pass: bool = False) -> SkillsEngine:
    engine = SkillsEngine(FsCache(clock=lambda: FAR_FUTURE_NS))
    if in_pass:
        engine.cache.begin_pass()
    return engine


def disabling_s01() -> SkillsSettings:
    return SkillsSettings(entries=MappingProxyType({"s01": EntrySettings(enabled=False)}))


def slow_json(snapshot: AgentSnapshot) -> str:
    """The snapshot file as it was written before statuses were shared."""
    return json.dumps(snapshot.to_dict(), sort_keys=True, separators=(",", ":"))


def test_gating_runs_once_per_distinct_input_not_per_agent(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tree)
    calls = GateCalls(monkeypatch)
    engine, the_host = fresh_engine(in_pass=True), host(tree)
    for agent in range(AGENTS):
        engine.evaluate(inputs(tree, agent, the_host))
    # Two distinct inputs: the shared root alone (29 agents), and agent-03's extra root.
    assert calls.count == SKILLS + (SKILLS + 1)


def test_equal_settings_built_separately_still_share(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tree)
    calls = GateCalls(monkeypatch)
    engine, the_host = fresh_engine(in_pass=True), host(tree)
    for agent in (1, 2, 4):
        # A new, equal settings object per agent (as the adapter may build them).
        engine.evaluate(inputs(tree, agent, the_host, disabling_s01()))
    assert calls.count == SKILLS


def test_different_gating_inputs_are_gated_separately(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tree)
    calls = GateCalls(monkeypatch)
    engine, the_host = fresh_engine(in_pass=True), host(tree)
    engine.evaluate(inputs(tree, 1, the_host))
    second = engine.evaluate(inputs(tree, 2, the_host, disabling_s01())).snapshot
    assert calls.count == 2 * SKILLS
    status = second.status("s01")
    assert status is not None and status.disabled


def test_shared_snapshots_are_byte_identical_to_agents_evaluated_alone(tree: Tree) -> None:
    build(tree)
    shared, the_host = fresh_engine(in_pass=True), host(tree)
    for agent in range(AGENTS):
        together = shared.evaluate(inputs(tree, agent, the_host)).snapshot
        alone = fresh_engine().evaluate(inputs(tree, agent, the_host)).snapshot
        assert together == alone
        assert together.content_hash == alone.content_hash == hash_body(together.body())
        assert together.compact_json() == alone.compact_json() == slow_json(together)


def test_a_changed_skill_is_seen_by_every_agent_on_the_next_pass(tree: Tree) -> None:
    build(tree)
    engine = fresh_engine()
    the_host = host(tree)
    engine.cache.begin_pass()
    before = [engine.evaluate(inputs(tree, a, the_host)).snapshot for a in range(4)]
    tree.skill("shared/s02", description="Rewritten.")
    engine.cache.begin_pass()
    after = [engine.evaluate(inputs(tree, a, the_host)).snapshot for a in range(4)]
    for old, new in zip(before, after, strict=True):
        status = new.status("s02")
        assert status is not None and status.description == "Rewritten."
        assert old.content_hash != new.content_hash
