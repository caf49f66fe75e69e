"""From Gateway/Agent/Skill resources to engine inputs; inline skills; snapshot values."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import MappingProxyType
from typing import Any

from clawplane.models import Agent, Gateway, Skill
from clawplane.skills import (
    GatewaySkills,
    Host,
    Placed,
    SkillsEngine,
    Source,
    parse_skill_frontmatter,
    render_skill_md,
)
from clawplane.skills.inline import MARKER
from clawplane.skills.manifest import parse_manifest

API = "clawplane.dev/v1alpha1"


def gateway(spec: dict[str, Any]) -> Gateway:
    return Gateway.model_validate({"apiVersion": API, "kind": "Gateway",
                                   "metadata": {"name": "default"}, "spec": spec})


def agent(name: str, spec: dict[str, Any] | None = None) -> Agent:
    return Agent.model_validate({"apiVersion": API, "kind": "Agent", "metadata": {"name": name},
                                 "spec": spec or {}})


def skill(name: str, spec: dict[str, Any]) -> Skill:
    return Skill.model_validate({"apiVersion": API, "kind": "Skill", "metadata": {"name": name},
                                 "spec": spec})


def host(tmp_path: Path, env: dict[str, str] | None = None) -> Host:
    return Host(env=MappingProxyType(env or {}), path="/usr/bin:/bin", platform="linux",
                home=str(tmp_path / "home"), cwd=str(tmp_path))


def setup_for(tmp_path: Path, spec: dict[str, Any], agents: list[Agent] | None = None,
              skills: list[Skill] | None = None) -> GatewaySkills:
    return GatewaySkills.from_resources(
        Placed(gateway(spec), tmp_path), [Placed(a, tmp_path / "agents") for a in agents or []],
        [Placed(s, tmp_path) for s in skills or []], tmp_path / ".clawplane")


def test_roots_follow_openclaws_precedence_and_resolve_relative_paths(tmp_path: Path) -> None:
    spec = {"skills": {"load": {"extraDirs": ["extra", "~/x"]},
                       "roots": {"plugins": ["plug"], "bundled": "/b", "workshop": "shop",
                                 "managed": "man", "personal": "~/.agents/skills"}},
            "agents": {"defaults": {"workspace": "ws"}}}
    setup = setup_for(tmp_path, spec, skills=[skill("inl", {"description": "d"})])
    inputs, _ = setup.inputs_for("main", host(tmp_path))
    got = [(r.dir.replace(str(tmp_path), "T"), r.source) for r in inputs.roots]
    assert got == [("T/extra", Source.EXTRA), ("~/x", Source.EXTRA), ("T/plug", Source.EXTRA),
                   ("/b", Source.BUNDLED), ("T/shop/main", Source.WORKSHOP),
                   ("T/man", Source.MANAGED), ("T/.clawplane/inline-skills", Source.MANAGED),
                   ("~/.agents/skills", Source.PERSONAL), ("T/ws/.agents/skills", Source.PROJECT),
                   ("T/ws/skills", Source.WORKSPACE)]
    assert inputs.managed_dir == f"{tmp_path}/man"


def test_workshop_tier_follows_agent_dir_then_roots_then_the_state_dir(tmp_path: Path) -> None:
    def workshop(setup: GatewaySkills, agent_id: str) -> list[str]:
        inputs, _ = setup.inputs_for(agent_id, host(tmp_path))
        return [r.dir.replace(str(tmp_path), "T") for r in inputs.roots if r.source is Source.WORKSHOP]

    state = {"agents": {"stateDir": "state"}}
    setup = setup_for(tmp_path, state, [agent("a", {"agentDir": "dirs/a"}), agent("b")])
    assert workshop(setup, "a") == ["T/agents/dirs/a/workshop-skills"]  # relative to the Agent's file
    assert workshop(setup, "b") == ["T/state/agents/b/agent/workshop-skills"]  # OpenClaw's default
    shortcut = setup_for(tmp_path, {**state, "skills": {"roots": {"workshop": "shop"}}}, [agent("b")])
    assert workshop(shortcut, "b") == ["T/shop/b"]
    assert workshop(setup_for(tmp_path, {}, [agent("b")]), "b") == []


def test_state_dir_gives_openclaws_default_workspaces(tmp_path: Path) -> None:
    state = {"agents": {"stateDir": "/s"}}
    assert setup_for(tmp_path, state, [agent("solo")]).inputs_for("solo", host(tmp_path))[0].agent.workspace_dir == "/s/workspace"
    many = setup_for(tmp_path, state, [agent("a"), agent("b")])
    assert many.inputs_for("b", host(tmp_path))[0].agent.workspace_dir == "/s/workspace-b"


def test_workspace_per_agent_like_openclaw(tmp_path: Path) -> None:
    spec = {"agents": {"defaults": {"workspace": "ws"}}}
    single = setup_for(tmp_path, spec, [agent("Solo")])
    assert single.inputs_for("solo", host(tmp_path))[0].agent.workspace_dir == f"{tmp_path}/ws"
    none = setup_for(tmp_path, spec)
    assert none.agent_ids() == ["main"]
    assert none.inputs_for("main", host(tmp_path))[0].agent.workspace_dir == f"{tmp_path}/ws"
    many = setup_for(tmp_path, spec, [agent("a"), agent("b", {"workspace": "own"})])
    assert many.inputs_for("a", host(tmp_path))[0].agent.workspace_dir == f"{tmp_path}/ws/a"
    # An agent's own workspace is relative to the Agent's file (here tmp/agents).
    assert many.inputs_for("b", host(tmp_path))[0].agent.workspace_dir == f"{tmp_path}/agents/own"
    assert many.default_agent_id() is None
    bare = setup_for(tmp_path, {}, [agent("a"), agent("b")])
    assert bare.inputs_for("a", host(tmp_path))[0].roots == ()


def test_skill_filters_inherit_replace_or_empty(tmp_path: Path) -> None:
    spec = {"agents": {"defaults": {"skills": ["x", "y"]}}}
    setup = setup_for(tmp_path, spec, [agent("inherit"), agent("own", {"skills": ["z"]}),
                                       agent("none", {"skills": []})])
    views = {a: setup.inputs_for(a, host(tmp_path))[0].agent for a in ("inherit", "own", "none")}
    assert views["inherit"].skill_filter == ("x", "y")
    assert views["own"].skill_filter == ("z",)
    assert views["none"].skill_filter == ()
    unrestricted = setup_for(tmp_path, {}, [agent("a", {"skillsLimits": {"maxSkillsPromptChars": 500}})])
    view = unrestricted.inputs_for("a", host(tmp_path))[0].agent
    assert view.skill_filter is None and view.max_prompt_chars == 500


def test_entries_resolve_env_references_and_api_keys(tmp_path: Path) -> None:
    spec = {"skills": {"entries": {
        "a": {"enabled": False, "apiKey": "  ", "env": {"LIT": "v", "REF": {"valueFrom": {"env": "SRC"}}}},
        "b": {"apiKey": {"valueFrom": {"env": "MISSING"}},
              "env": {"GONE": {"valueFrom": {"env": "NOT_SET"}}}},
    }}}
    setup = setup_for(tmp_path, spec)
    inputs, problems = setup.inputs_for("main", host(tmp_path, {"SRC": "from-env"}))
    a, b = inputs.settings.entries["a"], inputs.settings.entries["b"]
    assert a.enabled is False and dict(a.env) == {"LIT": "v", "REF": "from-env"}
    assert not a.api_key_configured and b.api_key_configured
    assert [p.code for p in problems] == ["skills.secret-unresolved"]


def test_config_view_overlays_typed_settings_on_the_config_extras(tmp_path: Path) -> None:
    spec = {"config": {"browser": {"enabled": False}, "skills": {"install": {"nodeManager": "pnpm"}}},
            "skills": {"entries": {"k": {"enabled": True}}, "roots": {"managed": "m"}},
            "plugins": {"enabled": False}}
    setup = setup_for(tmp_path, spec)
    view = setup.config_view()
    assert view["browser"] == {"enabled": False}
    assert view["skills"]["entries"]["k"]["enabled"] is True and "roots" not in view["skills"]
    assert view["plugins"] == {"enabled": False}
    assert setup.inputs_for("main", host(tmp_path))[0].settings.node_manager == "pnpm"


def test_inline_skill_renders_to_equivalent_frontmatter() -> None:
    resource = skill("inline-x", {
        "description": "Colon: and 'quotes' \"too\" with\u2028separator",
        "homepage": "https://example.com", "userInvocable": False,
        "disableModelInvocation": True, "body": "# Title\nbody",
        "openclaw": {"always": True, "emoji": "🦞", "os": ["linux"], "skillKey": "kx",
                     "primaryEnv": "KEY", "requires": {"bins": ["sh"], "anyBins": ["a"]},
                     "install": [{"kind": "brew", "formula": "jq", "stripComponents": 1}]}})
    text = render_skill_md(resource)
    fm = parse_skill_frontmatter(text)
    assert fm["name"] == "inline-x"
    assert fm["description"] == resource.spec.description
    assert fm["user-invocable"] == "false" and fm["disable-model-invocation"] == "true"
    manifest = parse_manifest(fm)
    assert manifest is not None and manifest.skill_key == "kx" and manifest.always is True
    assert manifest.requires is not None and manifest.requires.any_bins == ("a",)
    assert json.loads(fm["metadata"])["openclaw"]["install"][0]["stripComponents"] == 1
    assert text.endswith("# Title\nbody\n")


def test_inline_skills_are_written_once_and_stale_ones_removed(tmp_path: Path) -> None:
    setup = setup_for(tmp_path, {}, skills=[skill("one", {"description": "d"}),
                                            skill("two", {"description": "d"})])
    assert setup.materialize() == []
    one = setup.inline_dir / "one" / "SKILL.md"
    inode = os.stat(one).st_ino
    (setup.inline_dir / "user-folder").mkdir()
    again = setup_for(tmp_path, {}, skills=[skill("one", {"description": "d"})])
    again.materialize()
    assert os.stat(one).st_ino == inode  # unchanged content is not rewritten
    assert not (setup.inline_dir / "two").exists()
    assert (setup.inline_dir / "user-folder").exists()  # only our own folders are removed
    assert (setup.inline_dir / "one" / MARKER).exists()


def test_snapshot_is_frozen_json_serialisable_and_hashed(tmp_path: Path) -> None:
    ws = tmp_path / "ws" / "skills" / "alpha"
    ws.mkdir(parents=True)
    (ws / "SKILL.md").write_text("---\nname: alpha\ndescription: A.\n---\n", encoding="utf-8")
    setup = setup_for(tmp_path, {"agents": {"defaults": {"workspace": "ws"}}})
    inputs, _ = setup.inputs_for("main", host(tmp_path))
    first = SkillsEngine().evaluate(inputs).snapshot
    second = SkillsEngine().evaluate(inputs).snapshot
    assert first == second and first.content_hash == second.content_hash
    assert first.content_hash.startswith("sha256:")
    data = json.loads(first.to_json())
    assert data["prompt"]["text"] == first.prompt.text and data["skills"][0]["name"] == "alpha"
    (ws / "SKILL.md").write_text("---\nname: alpha\ndescription: B, longer.\n---\n", encoding="utf-8")
    third = SkillsEngine().evaluate(inputs).snapshot
    assert third.content_hash != first.content_hash
