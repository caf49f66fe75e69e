"""A watching engine (the supervisor's) trusts its change feed, and is never wrong for it.

After every kind of change a folder can see (edits, atomic saves, new, removed and
renamed folders, a write through a hard link made later, a folder swapped for a symlink,
a missing root appearing, a whole root replaced), its re-plan equals a cold plan by a
fresh engine. And an unchanged re-plan costs no ``stat`` per folder or skill: the count
does not grow with the tree.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clawplane.reconcile.engine import Engine, Planned
from clawplane.state import StateDB
from clawplane.workspace import Workspace

HEAD = "apiVersion: clawplane.dev/v1alpha1\n"

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/sys/fs/inotify"), reason="Linux inotify")


def skill(folder: Path, name: str, description: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody\n")


def build(root: Path, outside: Path, skills: int = 4) -> None:
    (root / "gateway.yaml").parent.mkdir(parents=True, exist_ok=True)
    (root / "gateway.yaml").write_text(
        HEAD + "kind: Gateway\nmetadata:\n  name: default\nspec:\n  skills:\n    load:\n"
        "      extraDirs: [./skills]\n  agents:\n    defaults:\n      workspace: ./ws\n"
    )
    names = []
    for group in ("g1", "g2"):
        for index in range(skills):
            name = f"{group}-s{index}"
            skill(root / "skills" / group / f"s{index}", name, f"Skill {name}.")
            names.append(name)
    picks = ", ".join([*names, "wsk", "fresh", "linked", "other", "later", "rebuilt"])
    (root / "agents.yaml").write_text("---\n".join(
        HEAD + f"kind: Agent\nmetadata:\n  name: {agent}\nspec:\n  skills: [{picks}]\n"
        for agent in ("a0", "a1")
    ))
    skill(root / "ws" / "a0" / "skills" / "wsk", "wsk", "Workspace skill.")
    skill(outside / "linked", "linked", "Lives outside the folder.")


def replan_stats(engine: Engine, db: StateDB, monkeypatch: pytest.MonkeyPatch) -> int:
    """``stat`` and ``lstat`` calls of one re-plan of an unchanged folder (after two to settle)."""
    engine.plan(db)
    engine.plan(db)
    calls = 0
    with monkeypatch.context() as patch:
        for name in ("stat", "lstat"):
            real = getattr(os, name)

            def counted(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
                nonlocal calls
                calls += 1
                return _real(*args, **kwargs)

            patch.setattr(os, name, counted)
        engine.plan(db)
    return calls


def watching(ws: Workspace) -> Engine:
    engine = Engine(ws, watch=True)
    assert engine.feed is not None
    # Written a moment ago: let the caches trust fresh files (every edit below changes size).
    engine.validation_cache.racy_window_ns = 0
    engine.validation_cache.walk.racy_window_ns = 0
    engine.renderer.engine.cache.racy_window_ns = 0
    return engine


def same_as_cold(warm: Planned, ws: Workspace, db: StateDB, step: str) -> None:
    cold = Engine(ws).plan(db)
    assert warm.outputs == cold.outputs, step
    assert [c.model_dump() for c in warm.plan.changes] == [c.model_dump() for c in cold.plan.changes], step


def replace_atomically(path: Path, text: str) -> None:
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(text)
    os.replace(temp, path)


def steps(root: Path, outside: Path) -> list[tuple[str, Callable[[], None]]]:
    sk = root / "skills"

    def hard_link_then_write_elsewhere() -> None:
        os.link(sk / "g1" / "s0" / "SKILL.md", outside / "hardlink.md")
        (outside / "hardlink.md").write_text("---\nname: g1-s0\ndescription: Edited through a hard link.\n---\nB\n")

    def swap_folder_for_symlink() -> None:
        shutil.rmtree(sk / "g1" / "s2")
        (sk / "g1" / "s2").symlink_to(outside / "linked")

    def move_another_folder_onto_a_path() -> None:
        skill(sk / "incoming", "g1-s1", "Moved in over the old one.")
        shutil.rmtree(sk / "g1" / "s1")
        (sk / "incoming").rename(sk / "g1" / "s1")

    def rebuild_under_a_renamed_parent() -> None:
        (root / "nest").rename(root / "nest-old")
        (root / "nest" / "deeper").mkdir(parents=True)
        (root / "nest" / "deeper" / "other.yaml").write_text(
            HEAD + "kind: Agent\nmetadata:\n  name: a4\nspec:\n  skills: [fresh]\n")

    def rebuild_a_group_under_its_name() -> None:
        (sk / "g1").rename(root / "g1-away")
        skill(sk / "g1" / "s3", "rebuilt", "Same path, another folder.")

    def link_to_a_file() -> None:
        (root / "targets").mkdir()
        (root / "targets" / "thing").write_text("x")
        (sk / "later").symlink_to(root / "targets" / "thing")

    def file_link_becomes_a_folder() -> None:
        (root / "targets" / "thing").unlink()
        skill(root / "targets" / "thing", "later", "Was a file, now a skill folder.")

    def replace_the_whole_root() -> None:
        (root / "skills").rename(root / "skills-old")
        skill(root / "skills" / "g1" / "s0", "g1-s0", "A brand new root.")

    return [
        ("edit in place", lambda: (sk / "g1" / "s0" / "SKILL.md").write_text(
            "---\nname: g1-s0\ndescription: Edited in place, longer.\n---\nBody\n")),
        ("atomic save", lambda: replace_atomically(
            sk / "g1" / "s1" / "SKILL.md", "---\nname: g1-s1\ndescription: Saved by an editor.\n---\nB\n")),
        ("new skill folder", lambda: skill(sk / "g1" / "fresh", "fresh", "Just added.")),
        ("removed skill folder", lambda: shutil.rmtree(sk / "g2" / "s1")),
        ("renamed group", lambda: (sk / "g2").rename(sk / "g3")),
        ("write through a later hard link", hard_link_then_write_elsewhere),
        ("folder swapped for a symlink", swap_folder_for_symlink),
        ("edit behind the symlink", lambda: (outside / "linked" / "SKILL.md").write_text(
            "---\nname: linked\ndescription: Edited behind the link.\n---\nBody\n")),
        ("missing workspace root appears", lambda: skill(root / "ws" / "a1" / "skills" / "other", "other", "New.")),
        ("workspace skill edited", lambda: (root / "ws" / "a0" / "skills" / "wsk" / "SKILL.md").write_text(
            "---\nname: wsk\ndescription: Workspace skill, edited.\n---\nBody\n")),
        ("nested resource file", lambda: (root / "more").mkdir() or (root / "more" / "extra.yaml").write_text(
            HEAD + "kind: Agent\nmetadata:\n  name: a2\nspec:\n  skills: [fresh]\n")),
        ("nested folder renamed", lambda: (root / "more").rename(root / "elsewhere")),
        ("another folder moved onto a path", move_another_folder_onto_a_path),
        ("deeper resources", lambda: (root / "nest" / "deeper").mkdir(parents=True) or
         (root / "nest" / "deeper" / "r.yaml").write_text(
             HEAD + "kind: Agent\nmetadata:\n  name: a3\nspec:\n  skills: [fresh]\n")),
        ("their parent renamed and rebuilt", rebuild_under_a_renamed_parent),
        ("a group rebuilt under its name", rebuild_a_group_under_its_name),
        ("a symlink to a file", link_to_a_file),
        ("its target becomes a skill folder", file_link_becomes_a_folder),
        ("whole root replaced", replace_the_whole_root),
    ]


def test_every_change_is_seen_by_a_watching_engine(tmp_path: Path) -> None:
    root, outside = tmp_path / "folder", tmp_path / "outside"
    build(root, outside)
    ws = Workspace.for_folder(root)
    db = StateDB.open(ws.state_dir)
    engine = watching(ws)
    for _ in range(3):  # cold, confirmed by stat, then trusted on the watches
        engine.plan(db)
    for step, change in steps(root, outside):
        change()
        same_as_cold(engine.plan(db), ws, db, step)
        # Settled again: an unchanged re-plan after the change still agrees.
        same_as_cold(engine.plan(db), ws, db, step + ", then unchanged")


def test_an_unchanged_replan_costs_no_stat_per_folder_or_skill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = []
    for size in (3, 30):
        root, outside = tmp_path / f"folder{size}", tmp_path / f"outside{size}"
        build(root, outside, skills=size)
        ws = Workspace.for_folder(root)
        db = StateDB.open(ws.state_dir)
        counts.append(replan_stats(watching(ws), db, monkeypatch))
        # Without the feed, the same re-plan stats every folder and skill file.
        plain = Engine(ws)
        plain.validation_cache.walk.racy_window_ns = 0
        plain.renderer.engine.cache.racy_window_ns = 0
        assert replan_stats(plain, db, monkeypatch) > 4 * size
    assert counts[0] == counts[1]
