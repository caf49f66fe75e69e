"""Gating in OpenClaw's order, agent filters, exposure flags and the reasons recorded."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from types import MappingProxyType

from tests.unit.skills.skilltree import Run, Tree, names

from clawplane.skills import AgentView, EntrySettings, SkillsSettings, Source
from clawplane.skills.gating import Gate
from clawplane.skills.types import Host

WS = Source.WORKSPACE


def meta(manifest: str) -> str:
    """A ``metadata`` frontmatter line around a JSON manifest object."""
    return f'metadata: {{"openclaw": {manifest}}}'


def entries(**kwargs: EntrySettings) -> SkillsSettings:
    return SkillsSettings(entries=MappingProxyType(dict(kwargs)))


def test_entry_enabled_false_disables_by_skill_key(tree: Tree, run: Run) -> None:
    tree.skill("ws/off")
    tree.skill("ws/keyed", extra=meta('{"skillKey": "custom"}'))
    tree.skill("ws/by-name-not-key", extra=meta('{"skillKey": "other"}'))
    settings = entries(off=EntrySettings(enabled=False), custom=EntrySettings(enabled=False),
                       **{"by-name-not-key": EntrySettings(enabled=False)})
    snap, _ = run([("ws", WS)], settings=settings)
    assert names(snap, lambda s: s.disabled) == ["keyed", "off"]
    assert snap.status("off").reasons == ("disabled",)  # type: ignore[union-attr]


def test_allow_bundled_applies_to_bundled_and_custodian_only(tree: Tree, run: Run) -> None:
    tree.skill("bundled/by-name")
    tree.skill("bundled/by-key", extra=meta('{"skillKey": "kk"}'))
    tree.skill("bundled/dropped")
    tree.skill("custodian/cust")
    tree.skill("ws/workspace-skill")
    settings = SkillsSettings(allow_bundled=("by-name", "kk", " "))
    snap, _ = run([("bundled", Source.BUNDLED), ("custodian", Source.CUSTODIAN), ("ws", WS)],
                  settings=settings)
    assert names(snap, lambda s: s.blocked_by_allowlist) == ["cust", "dropped"]
    empty, _ = run([("bundled", Source.BUNDLED)], settings=SkillsSettings(allow_bundled=()))
    assert names(empty, lambda s: s.blocked_by_allowlist) == []


def test_os_listing_is_normalized_but_the_prompt_compares_exactly(tree: Tree, run: Run) -> None:
    tree.skill("ws/darwin", extra=meta('{"os": ["darwin"]}'))
    tree.skill("ws/cap", extra=meta('{"os": ["Linux"]}'))
    tree.skill("ws/linux", extra=meta('{"os": "win32, linux"}'))
    snap, _ = run([("ws", WS)])
    assert names(snap, lambda s: s.eligible) == ["cap", "linux"]
    assert list(snap.prompt.skills) == ["linux"]
    assert snap.status("cap").reasons == ("prompt-platform-mismatch",)  # type: ignore[union-attr]
    assert snap.status("darwin").reasons == ("platform-incompatible",)  # type: ignore[union-attr]
    mac = Run(tree, platform="darwin")
    mac_snap, _ = mac([("ws", WS)])
    assert names(mac_snap, lambda s: s.eligible) == ["darwin"]


def test_always_skips_requirements_but_not_os(tree: Tree, run: Run) -> None:
    tree.skill("ws/always", extra=meta('{"always": true, "requires": {"bins": ["no-such-bin"]}}'))
    tree.skill("ws/always-os", extra=meta('{"always": true, "os": ["darwin"]}'))
    snap, _ = run([("ws", WS)])
    assert names(snap, lambda s: s.eligible) == ["always"]
    assert snap.status("always").missing.empty  # type: ignore[union-attr]


def test_required_env_from_host_entry_or_primary_env_with_api_key(tree: Tree, run: Run) -> None:
    req = meta('{"primaryEnv": "%s", "requires": {"env": ["%s"]}}')
    tree.skill("ws/host", extra=req % ("X", "HOST_VAR"))
    tree.skill("ws/blank", extra=req % ("X", "BLANK_VAR"))
    tree.skill("ws/entry", extra=req % ("X", "ENTRY_VAR"))
    tree.skill("ws/keyed", extra=req % ("TOKEN", "TOKEN"))
    tree.skill("ws/nokey", extra=req % ("TOKEN2", "TOKEN2"))
    run.env = {"HOST_VAR": "1", "BLANK_VAR": "  "}
    settings = entries(entry=EntrySettings(env=MappingProxyType({"ENTRY_VAR": "v"})),
                       keyed=EntrySettings(api_key_configured=True), nokey=EntrySettings())
    snap, _ = run([("ws", WS)], settings=settings)
    assert names(snap, lambda s: s.eligible) == ["entry", "host", "keyed"]
    assert snap.status("blank").missing.env == ("BLANK_VAR",)  # type: ignore[union-attr]


def test_required_config_paths_are_truthy_with_two_defaults(tree: Tree, run: Run) -> None:
    paths = ["a.str", "a.num", "a.obj", "a.list.0", "a.list.length", "browser.enabled", "a.toString"]
    tree.skill("ws/ok", extra=meta(json.dumps({"requires": {"config": paths}})))
    for bad in ("a.zero", "a.empty", "a.none", "a.false", "browser.evaluateEnabled", "__proto__.x",
                "a.str.length", "missing"):
        tree.skill(f"ws/bad-{bad.replace('.', '-').strip('_')}",
                   extra=meta(json.dumps({"requires": {"config": [bad]}})))
    config = {"a": {"str": "x", "num": 2, "obj": {}, "list": ["v"], "zero": 0, "empty": " ",
                    "none": None, "false": False}, "browser": {"evaluateEnabled": False}}
    snap, _ = run([("ws", WS)], config=config)
    assert names(snap, lambda s: s.eligible) == ["ok"]
    assert snap.status("ok").config_checks[-2:] == (("browser.enabled", True), ("a.toString", True))  # type: ignore[union-attr]


def test_bins_on_path_include_directories_and_need_execute_permission(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    (bindir / "a-dir").mkdir(parents=True)
    exe = bindir / "tool"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    (bindir / "plain").write_text("no exec bit")
    host = Host(env={}, path=f"rel:{bindir}::", platform="linux", home=None, cwd=str(tmp_path))
    (tmp_path / "rel").mkdir()
    gate = Gate(SkillsSettings(), {}, host)
    assert gate.has_bin("tool") and gate.has_bin("a-dir")
    assert not gate.has_bin("plain")  # a file without any execute bit, even for root
    assert not gate.has_bin("nope")


def test_any_bins_needs_one(tree: Tree, run: Run) -> None:
    tree.skill("ws/any", extra=meta('{"requires": {"anyBins": ["no-such-bin", "sh"]}}'))
    tree.skill("ws/none", extra=meta('{"requires": {"anyBins": ["no-a", "no-b"]}}'))
    snap, _ = run([("ws", WS)])
    assert names(snap, lambda s: s.eligible) == ["any"]
    assert snap.status("none").missing.any_bins == ("no-a", "no-b")  # type: ignore[union-attr]


def test_agent_filter_replaces_inherits_and_empty_means_none(tree: Tree, run: Run) -> None:
    for name in ("alpha", "beta", "gamma"):
        tree.skill(f"ws/{name}")
    inherit, _ = run([("ws", WS)], agent=AgentView("main", skill_filter=None))
    assert list(inherit.prompt.skills) == ["alpha", "beta", "gamma"]
    only, _ = run([("ws", WS)], agent=AgentView("docs", skill_filter=(" beta ", "", "unknown")))
    assert list(only.prompt.skills) == ["beta"]
    assert names(only, lambda s: s.blocked_by_agent_filter) == ["alpha", "gamma"]
    assert only.status("alpha").eligible  # type: ignore[union-attr]
    assert only.status("alpha").reasons == ("agent-filter",)  # type: ignore[union-attr]
    none, _ = run([("ws", WS)], agent=AgentView("none", skill_filter=()))
    assert none.prompt.text == "" and none.prompt.skills == ()


def test_agent_filter_matches_names_not_skill_keys(tree: Tree, run: Run) -> None:
    tree.skill("ws/named", extra=meta('{"skillKey": "the-key"}'))
    snap, _ = run([("ws", WS)], agent=AgentView("a", skill_filter=("the-key",)))
    assert snap.prompt.skills == ()


def test_disable_model_invocation_and_user_invocable(tree: Tree, run: Run) -> None:
    tree.skill("ws/hidden", extra="disable-model-invocation: yes")
    tree.skill("ws/nocmd", extra="user-invocable: off")
    snap, _ = run([("ws", WS)])
    hidden, nocmd = snap.status("hidden"), snap.status("nocmd")
    assert hidden is not None and nocmd is not None
    assert hidden.eligible and not hidden.model_visible and hidden.command_visible
    assert hidden.reasons == ("disable-model-invocation",)
    assert nocmd.model_visible and not nocmd.command_visible and not nocmd.user_invocable
    assert nocmd.reasons == ("not-user-invocable",)
    assert list(snap.prompt.skills) == ["nocmd"]
