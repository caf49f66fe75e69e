"""clawplane's skills engine against the real OpenClaw 2026.9.6, scenario by scenario.

Each test builds a tree, writes the same setup as clawplane resources and as
``openclaw.json``, and asserts that OpenClaw and clawplane agree on the prompt
text (and its length), the skills in it, every flag of ``skills list --json``,
the whole of ``skills check --json``, and the reason for every skipped skill.
The oracle is skipped loudly when it is not installed (tests/oracles/install.sh).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from tests.compat.conftest import require_oracle
from tests.compat.test_skills_world import World, compare, link
from typer.testing import CliRunner

from clawplane.cli.app import app
from clawplane.skills import SkillRoot, SkillsInputs, Source

META_BIN = 'metadata: {"openclaw": {"requires": {"bins": ["%s"]}}}'


@pytest.fixture
def world(tmp_path: Path) -> World:
    require_oracle("openclaw")
    return World(tmp_path)


def assert_same(world: World, *agents: str) -> None:
    setup = world.setup()
    runs = world.openclaw_runs(agents or ("main",))
    problems: list[str] = []
    for agent, oracle in runs.items():
        problems += [f"[agent {agent}] {p}" for p in compare(world, agent, setup, oracle)]
    assert not problems, "\n".join(problems)


def test_tiers_precedence_and_home_locations(world: World) -> None:
    ws = world.root / "ws"
    extra = world.root / "extra"
    world.gateway = {"agents": {"defaults": {"workspace": str(ws)}},
                     "skills": {"load": {"extraDirs": [str(extra)]}}}
    for folder, source in ((extra / "shared", "extra"), (world.bundled / "shared", "bundled"),
                           (world.managed / "shared", "managed"),
                           (world.personal / "shared", "personal"),
                           (ws / ".agents/skills/shared", "project")):
        world.skill(folder, "shared", f"Shared, from the {source} tier.")
    world.skill(ws / "skills/shared", "shared", "Shared, the workspace copy wins.")
    world.skill(ws / ".agents/skills/proj", "proj", "Project skill.")
    world.skill(extra / "ext", "ext", "Extra skill with <xml> & 'quotes'.")
    world.skill(world.bundled / "bun", "bun", "Bundled skill.")
    world.skill(world.managed / "man", "man", "Managed skill 😀.")
    world.skill(world.personal / "per", "per", "Personal skill.")
    world.skill(world.home / "homews/extra2/x", "in-home", "Under the home directory.")
    world.gateway["skills"]["load"]["extraDirs"].append(str(world.home / "homews/extra2"))
    world.skill(ws / "skills/dup1", "dup", "First dup (loses).")
    world.skill(ws / "skills/dup2", "dup", "Second dup (wins).")
    world.skill(ws / "skills/Zeta", "Zeta", "Upper-case name.")
    world.skill(ws / "skills/alpha-b", "alpha-b", "Hyphen.")
    world.skill(ws / "skills/alpha_b", "alpha_b", "Underscore.")
    world.skill(ws / "skills/B2", "B2", "Digit.")
    assert_same(world)


def test_discovery_depth_grouping_and_redirects(world: World) -> None:
    ws = world.root / "ws"
    extra = world.root / "extra"
    extra_skills = world.root / "more" / "skills"
    redirect = world.root / "redirect"
    root_skill = world.root / "rootskill"
    both_valid = world.root / "both-valid"
    both_invalid = world.root / "both-invalid"
    world.gateway = {"agents": {"defaults": {"workspace": str(ws)}},
                     "skills": {"load": {"extraDirs": [str(p) for p in (
                         extra, extra_skills, redirect, root_skill, both_valid, both_invalid)]}}}
    world.skill(ws / "skills/a/b/c/d/e/deep6", "deep6", "Six levels down.")
    world.skill(ws / "skills/a/b/c/d/e/f/deep7", "deep7", "Seven levels down.")
    world.skill(ws / "skills/nested/skills/inner", "inner", "Nested skills folder.")
    world.skill(ws / "skills/.hidden/h", "hidden", "Dot folder.")
    world.skill(ws / "skills/node_modules/nm", "nm", "node_modules.")
    world.skill(ws / "skills/stop", "stop", "Stops descent.")
    world.skill(ws / "skills/stop/below", "below", "Below a skill.")
    world.skill(extra / "g1/ext2", "ext2", "Extra depth two.")
    world.skill(extra / "g1/g2/deep3", "deep3", "Extra depth three.")
    world.skill(extra_skills / "a/b/c/x", "more-deep", "Extra named skills goes deep.")
    world.skill(redirect / "skills/r1", "r1", "Redirected child.")
    world.skill(redirect / "other/o1", "o1", "Outside skills/: the root stays the base.")
    world.skill(root_skill, "rootskill", "The extra dir is one skill.")
    world.skill(root_skill / "child", "child", "Child of a root skill.")
    world.skill(both_valid, "both-valid", "Root SKILL.md next to skills/.")
    world.skill(both_valid / "skills/bv", "bv", "Ignored: the valid root wins.")
    world.skill(both_invalid, None, None)
    world.skill(both_invalid / "skills/bi", "bi", "Loaded: the root is invalid.")
    assert_same(world)


def test_containment_symlinks_and_hardlinks(world: World) -> None:
    ws = world.root / "ws"
    outside = world.root / "outside"
    allowed = world.root / "allowed"
    world.gateway = {"agents": {"defaults": {"workspace": str(ws)}},
                     "skills": {"load": {"allowSymlinkTargets": [str(allowed)]}}}
    world.skill(outside / "esc", "esc", "Escapes the workspace.")
    world.skill(allowed / "ok", "linked-ok", "Allowed target.")
    world.skill(outside / "bun-esc", "bun-esc", "Escapes the bundled root.")
    world.skill(outside / "man-out", "man-out", "Managed may point anywhere.")
    world.skill(outside / "grp/inner", "grp-inner", "Inside a linked group.")
    link(outside / "esc", ws / "skills/escape")
    link(allowed / "ok", ws / "skills/linked")
    link(outside / "bun-esc", world.bundled / "bun-esc")
    link(allowed / "ok", world.bundled / "bun-allowed")
    link(outside / "man-out", world.managed / "man-out")
    link(outside / "grp", ws / "skills/group")
    md_target = world.write(outside / "file.md", "---\nname: mdlink\ndescription: Linked file.\n---\n")
    (ws / "skills/mdlink").mkdir(parents=True)
    link(md_target, ws / "skills/mdlink/SKILL.md")
    hard = world.skill(ws / "skills/hard", "hard", "Hardlinked SKILL.md.")
    os.link(hard, world.root / "hard-copy.md")
    bundled_hard = world.skill(world.bundled / "bhard", "bhard", "Bundled hardlink is fine.")
    os.link(bundled_hard, world.root / "bhard-copy.md")
    world.skill(ws / "skills/plain", "plain", "Plain skill.")
    assert_same(world)


def test_frontmatter_variants(world: World) -> None:
    ws = world.root / "ws"
    world.gateway = {"agents": {"defaults": {"workspace": str(ws)}},
                     "skills": {"limits": {"maxSkillFileBytes": 2000}}}
    sk = ws / "skills"
    world.write(sk / "bom/SKILL.md", "\ufeff---\r\nname: bom\r\ndescription: BOM and CRLF.\r\n---\r\n")
    world.write(sk / "noopen/SKILL.md", "name: noopen\ndescription: no opening line\n")
    world.write(sk / "unterminated/SKILL.md", "---\nname: unterminated\ndescription: d\n")
    world.skill(sk / "colon", "colon", "Use this: when things happen")
    world.skill(sk / "unclosed", "unclosed", "[unclosed")
    world.skill(sk / "badname", "@bad", "Reserved character in name.")
    world.skill(sk / "nodesc", "nodesc", None)
    world.skill(sk / "dirname-fallback", None, "Name comes from the folder.")
    world.skill(sk / "numeric", "1.0", "1e3")
    world.skill(sk / "folded", "folded", ">\n  Folded\n  description.")
    world.skill(sk / "yamlmeta", "yamlmeta", "YAML block metadata.",
                "metadata:\n  openclaw:\n    emoji: '🦞'\n    requires:\n      bins: [sh]")
    world.skill(sk / "alwaysyes", "alwaysyes", "always: yes stays a string.",
                "metadata:\n  openclaw:\n    always: yes\n    requires:\n      bins: [no-such-bin-q]")
    world.skill(sk / "legacy", "legacy", "Legacy clawdbot block.",
                'metadata: {"clawdbot": {"requires": {"bins": ["no-such-bin-l"]}}}')
    world.skill(sk / "json5", "json5", "JSON5 metadata.",
                "metadata: '{openclaw: {requires: {anyBins: [\"no-a\", \"sh\",],},}}'")
    world.skill(sk / "comma", "comma", "Comma lists.",
                'metadata: {"openclaw": {"os": "linux, darwin", "requires": {"bins": "sh, no-such-bin-c"}}}')
    world.skill(sk / "bools", "bools", "Boolean spellings.", "user-invocable: No\ndisable-model-invocation: ON")
    world.skill(sk / "bools2", "bools2", "Unknown spelling keeps the default.",
                "user-invocable: nope\ndisable-model-invocation: 1")
    world.skill(sk / "homepage", "homepage", "Homepage and emoji.",
                "homepage: https://example.com/x\nmetadata: {\"openclaw\": {\"emoji\": \"🧪\", "
                "\"primaryEnv\": \"HP_KEY\"}}")
    world.write(sk / "big/SKILL.md", "---\nname: big\ndescription: too big\n---\n" + "x" * 3000)
    world.write(sk / "multiline/SKILL.md",
                '---\nname: multiline\nmetadata: {\n  "openclaw": {"emoji": "x"}\n}\n'
                "description: Multi-line JSON metadata.\n---\n")
    world.write(sk / "badindent/SKILL.md",
                '---\nname: badindent\nmetadata: {"openclaw":\n{"emoji": "x"}}\ndescription: d\n---\n')
    world.write(sk / "dupkey/SKILL.md", "---\nname: dupkey\nname: again\ndescription: d\n---\n")
    world.write(sk / "emptyfm/SKILL.md", "---\n---\n# no frontmatter keys\n")
    assert_same(world)


def test_gating_entries_allowlist_os_env_config_bins(world: World) -> None:
    ws = world.root / "ws"
    sk = ws / "skills"
    bindir = world.root / "bin"
    (bindir / "dir-as-bin").mkdir(parents=True)
    world.env = {"PRESENT_ENV": "yes", "BLANK_ENV": "  "}
    world.gateway = {
        "agents": {"defaults": {"workspace": str(ws)}},
        "skills": {
            "allowBundled": ["keep-by-name", "kept-key"],
            "entries": {
                "off": {"enabled": False},
                "custom-key": {"enabled": False},
                "with-env": {"env": {"ENTRY_ENV": "set"}},
                "with-key": {"apiKey": "sk-123"},
                "bdisabled": {"enabled": False},
                "origin-key": {"enabled": False},
            },
        },
        "config": {"browser": {"evaluateEnabled": False}, "session": {"dmScope": "main"}},
    }
    meta = 'metadata: {"openclaw": %s}'
    world.skill(sk / "off", "off", "Disabled by entry.")
    world.skill(sk / "keyed", "keyed", "Disabled through skillKey.", meta % '{"skillKey": "custom-key"}')
    world.skill(sk / "darwin-only", "darwin-only", "macOS only.", meta % '{"os": ["darwin"]}')
    world.skill(sk / "linux-cap", "linux-cap", "Capitalised OS.", meta % '{"os": ["Linux"]}')
    world.skill(sk / "macos-alias", "macos-alias", "macos alias.", meta % '{"os": ["macos"]}')
    world.skill(sk / "linux", "linux", "Linux listed.", meta % '{"os": ["win32", "linux"]}')
    world.skill(sk / "always", "always", "Always, despite missing bins.",
                meta % '{"always": true, "requires": {"bins": ["no-such-bin-1"]}}')
    world.skill(sk / "always-os", "always-os", "Always does not beat os.",
                meta % '{"always": true, "os": ["darwin"]}')
    world.skill(sk / "env-present", "env-present", "Env from the host.",
                meta % '{"requires": {"env": ["PRESENT_ENV"]}}')
    world.skill(sk / "env-blank", "env-blank", "Blank env does not count.",
                meta % '{"requires": {"env": ["BLANK_ENV"]}}')
    world.skill(sk / "with-env", "with-env", "Env from the entry.",
                meta % '{"requires": {"env": ["ENTRY_ENV"]}}')
    world.skill(sk / "with-key", "with-key", "apiKey fills primaryEnv.",
                meta % '{"primaryEnv": "WK_TOKEN", "requires": {"env": ["WK_TOKEN"]}}')
    world.skill(sk / "no-key", "no-key", "primaryEnv without apiKey.",
                meta % '{"primaryEnv": "NK_TOKEN", "requires": {"env": ["NK_TOKEN", "OTHER"]}}')
    world.skill(sk / "cfg", "cfg", "Config paths.",
                meta % '{"requires": {"config": ["session.dmScope", "browser.enabled"]}}')
    world.skill(sk / "cfg-false", "cfg-false", "Explicit false beats the default.",
                meta % '{"requires": {"config": ["browser.evaluateEnabled"]}}')
    world.skill(sk / "cfg-missing", "cfg-missing", "Missing and blocked paths.",
                meta % '{"requires": {"config": ["no.such.path", "__proto__.x"]}}')
    world.skill(sk / "bins", "bins", "sh is on PATH.", meta % '{"requires": {"bins": ["sh", "env"]}}')
    world.skill(sk / "anybins", "anybins", "One of them.",
                meta % '{"requires": {"anyBins": ["no-such-bin-2", "sh"]}}')
    world.skill(sk / "nobins", "nobins", "None of them, with installers.",
                meta % ('{"requires": {"bins": ["no-such-bin-3"], "anyBins": ["no-a", "no-b"]}, '
                        '"install": [{"kind": "brew", "formula": "jq"}, '
                        '{"kind": "node", "package": "left-pad@1.3.0"}, '
                        '{"type": "download", "url": "https://example.com/dl/tool.tgz"}]}'))
    world.skill(sk / "downloads", "downloads", "Downloads only.",
                meta % ('{"requires": {"bins": ["no-such-bin-4"]}, "install": ['
                        '{"kind": "download", "url": "https://example.com/a.zip", "label": "A"},'
                        '{"kind": "download", "url": "https://example.com/b.zip", "os": ["darwin"]},'
                        '{"kind": "download", "url": "https://example.com/c/"}]}'))
    world.skill(world.bundled / "keep-by-name", "keep-by-name", "Allowed by name.")
    world.skill(world.bundled / "kept", "kept", "Allowed by key.", meta % '{"skillKey": "kept-key"}')
    world.skill(world.bundled / "dropped", "dropped", "Not in allowBundled.")
    world.skill(world.bundled / "bdisabled", "bdisabled", "Disabled and blocked.")
    world.skill(ws / "skills/not-bundled", "not-bundled", "allowBundled ignores workspace skills.")
    world.skill(sk / "origin", "origin", "Skill key from a ClawHub install record.")
    world.write(sk / "origin/.openclaw/source-origin.json", '{"slug": " origin-key "}')
    assert_same(world)


def test_agent_filters_and_workspaces(world: World) -> None:
    shared = world.root / "shared-ws"
    own = world.root / "own-ws"
    world.gateway = {"agents": {"defaults": {"workspace": str(shared), "skills": ["alpha", "gamma"]}}}
    world.agents = {
        "main": {},
        "docs": {"skills": ["beta", " alpha "]},
        "none": {"skills": []},
        "solo": {"workspace": str(own), "skillsLimits": {"maxSkillsPromptChars": 900}},
    }
    for agent in ("main", "docs", "none"):
        for name in ("alpha", "beta", "gamma"):
            world.skill(shared / agent / "skills" / name, name, f"{name} for {agent}.")
    world.skill(shared / "docs/skills/hidden", "hidden", "Not for the model.",
                "disable-model-invocation: true")
    world.skill(shared / "main/skills/cmdless", "cmdless", "No slash command.", "user-invocable: false")
    for index in range(4):
        world.skill(own / "skills" / f"s{index}", f"s{index}", "A description " * 8)
    assert_same(world, "main", "docs", "none", "solo")


def test_single_agent_uses_the_default_workspace_itself(world: World) -> None:
    shared = world.root / "shared-ws"
    world.gateway = {"agents": {"defaults": {"workspace": str(shared)}}}
    world.agents = {"helper": {"skills": ["one"]}}
    world.skill(shared / "skills/one", "one", "One.")
    world.skill(shared / "skills/two", "two", "Two.")
    assert_same(world, "helper")


def test_prompt_budget_truncation_and_compact_modes(world: World) -> None:
    ws = world.root / "ws"
    world.gateway = {"agents": {"defaults": {"workspace": str(ws)}},
                     "skills": {"limits": {"maxSkillsLoadedPerSource": 300,
                                           "maxCandidatesPerRoot": 400}}}
    world.agents = {
        "many": {},
        "compact": {"skillsLimits": {"maxSkillsPromptChars": 9000}},
        "tiny": {"skillsLimits": {"maxSkillsPromptChars": 2500}},
        "fits": {"skillsLimits": {"maxSkillsPromptChars": 700}},
        "nothing": {"skillsLimits": {"maxSkillsPromptChars": 100}},
    }
    for agent in world.agents:
        (ws / agent).mkdir(parents=True)
    for index in range(200):
        name = f"skill-{index:03d}"
        desc = f"Emoji 😀 boundary {'x' * (index % 7)} description number {index} " + "word " * 10
        world.skill(ws / "many/skills" / name, name, desc)
    for index in range(60):
        world.skill(ws / "compact/skills" / f"c{index}", f"c{index}", "Spaced   out\tdescription " * 5)
        world.skill(ws / "tiny/skills" / f"t{index}", f"t{index}", "Tiny budget 😀😀 " * 3)
    world.skill(ws / "fits/skills/one", "one", "Only one skill.")
    world.skill(ws / "nothing/skills/one", "one", "Nothing fits.")
    assert_same(world, "many", "compact", "tiny", "fits", "nothing")


def test_discovery_limits(world: World) -> None:
    ws = world.root / "ws"
    world.gateway = {"agents": {"defaults": {"workspace": str(ws)}},
                     "skills": {"limits": {"maxCandidatesPerRoot": 5, "maxSkillsLoadedPerSource": 3}}}
    for index in range(8):
        world.skill(ws / f"skills/s{index}", f"s{index}", f"Skill {index}.")
    world.skill(ws / ".agents/skills/skills/p1", "p1", "Nested skills beyond the cap.")
    for index in range(7):
        (ws / f".agents/skills/a{index}").mkdir(parents=True)
    assert_same(world)


def test_workshop_tier_is_a_container_between_bundled_and_managed(world: World) -> None:
    ws = world.root / "ws"
    # OpenClaw's agent dirs live in the state dir proper (~/.openclaw), which a custom config
    # path does not move (unlike the managed skills dir, which follows the config file).
    shop = world.home / ".openclaw/agents/main/agent/workshop-skills"
    world.gateway = {"agents": {"defaults": {"workspace": str(ws)}}}
    world.agents = {"main": {}}
    world.skill(shop, "shop-root", "A SKILL.md at the workshop root is ignored.")
    world.skill(shop / "w1", "w1", "Workshop skill.")
    world.skill(shop / "grp/w2", "w2", "Grouped workshop skill.")
    world.skill(shop / "over-bundled", "over-bundled", "Workshop beats bundled.")
    world.skill(world.bundled / "over-bundled", "over-bundled", "Bundled copy.")
    world.skill(shop / "under-managed", "under-managed", "Managed beats workshop.")
    world.skill(world.managed / "under-managed", "under-managed", "Managed copy.")

    def with_workshop(inputs: SkillsInputs) -> SkillsInputs:
        # OpenClaw's workshop dir is ~/.openclaw/agents/<id>/agent/workshop-skills; clawplane's
        # Gateway names <workshop>/<id>, so the engine gets OpenClaw's root directly here.
        roots = list(inputs.roots)
        at = next(i for i, r in enumerate(roots) if r.source is Source.MANAGED)
        roots.insert(at, SkillRoot(str(shop), Source.WORKSHOP))
        return dataclasses.replace(inputs, roots=tuple(roots))

    world.adjust = with_workshop
    assert_same(world)


def test_inline_skills_load_at_the_managed_tier(world: World) -> None:
    ws = world.root / "ws"
    world.gateway = {"agents": {"defaults": {"workspace": str(ws)}}}
    world.skills = {
        "inline-one": {"description": "Inline: with a colon & <xml>.", "body": "# One\n",
                       "openclaw": {"emoji": "🦞", "requires": {"bins": ["sh"]}}},
        "inline-hidden": {"description": "Inline, hidden.", "disableModelInvocation": True,
                          "userInvocable": False},
        "shadowed": {"description": "Inline copy, loses to the workspace."},
    }
    world.skill(ws / "skills/shadowed", "shadowed", "Workspace copy wins.")
    assert_same(world)


def test_clawplane_cli_matches_openclaw_cli(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end: ``clawplane skills check/prompt`` on resource files against OpenClaw's CLI."""
    ws = world.root / "ws"
    world.gateway = {"agents": {"defaults": {"workspace": str(ws), "skills": ["alpha", "beta"]}}}
    world.agents = {"main": {}, "ops": {"skills": ["gamma"]}}
    for agent in ("main", "ops"):
        world.skill(ws / agent / "skills/alpha", "alpha", "Alpha & <co>.")
        world.skill(ws / agent / "skills/beta", "beta", "Beta needs a binary.", META_BIN % "no-such-b")
        world.skill(ws / agent / "skills/gamma", "gamma", "Gamma.", "user-invocable: no")
    world.skills = {"inline-i": {"description": "Inline one."}}
    world.setup()
    for key, value in world.oracle_env().items():
        if key in ("PATH", "HOME", "CLAWPLANE_ORACLE_DIR"):
            monkeypatch.setenv(key, value)
    runner = CliRunner()
    runs = world.openclaw_runs(("main", "ops"))
    for agent, oracle in runs.items():
        check = runner.invoke(app, ["skills", "check", str(world.folder), "--agent", agent, "--json"])
        prompt = runner.invoke(app, ["skills", "prompt", str(world.folder), "--agent", agent])
        assert check.exit_code == 0 and prompt.exit_code == 0, check.output + prompt.output
        ours = json.loads(check.stdout)
        for key in ("summary", "eligible", "modelVisible", "commandVisible", "agentFiltered",
                    "missingRequirements", "agentSkillFilter", "workspaceDir"):
            assert ours.get(key) == oracle.check.get(key), key
        assert prompt.stdout == oracle.snapshot["prompt"]
