"""Fast rescans: an unchanged tree costs only stat calls; every kind of change is still seen."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from tests.unit.skills.skilltree import Run, Tree, names

from clawplane.skills import FsCache, SkillsEngine, SkillsSettings, Source
from clawplane.skills import loader as loader_mod

WS = Source.WORKSPACE


class Counter:
    """Counts directory listings and file reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.listings = 0
        self.reads = 0
        real_scandir, real_read = os.scandir, loader_mod._read

        def scandir(path: Any) -> Any:
            self.listings += 1
            return real_scandir(path)

        def read(path: str) -> bytes:
            self.reads += 1
            return real_read(path)

        monkeypatch.setattr(os, "scandir", scandir)
        monkeypatch.setattr(loader_mod, "_read", read)

    def reset(self) -> None:
        self.listings = self.reads = 0


def touch(path: Path, ns: int) -> None:
    """Give ``path`` a distinct, explicit mtime so a change never hides in one clock tick."""
    os.utime(path, ns=(ns, ns))


def build(tree: Tree) -> None:
    for index in range(5):
        tree.skill(f"ws/group/s{index}")
    tree.skill("ws/single")


def test_unchanged_tree_is_not_listed_or_read_again(tree: Tree, run: Run,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    build(tree)
    counter = Counter(monkeypatch)
    first, _ = run([("ws", WS)])
    assert counter.reads == 6 and counter.listings > 0
    counter.reset()
    second, _ = run([("ws", WS)])
    assert (counter.listings, counter.reads) == (0, 0)
    assert second == first and second.content_hash == first.content_hash


def test_changed_file_is_reread_and_only_that_file(tree: Tree, run: Run,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    build(tree)
    counter = Counter(monkeypatch)
    before, _ = run([("ws", WS)])
    changed = tree.skill("ws/group/s2", "s2", "changed description")
    touch(changed, 1_000_000_000)
    counter.reset()
    after, _ = run([("ws", WS)])
    assert counter.reads == 1
    assert after.status("s2").description == "changed description"  # type: ignore[union-attr]
    assert after.content_hash != before.content_hash


def test_added_removed_and_relinked_skills_are_seen(tree: Tree, run: Run) -> None:
    build(tree)
    tree.skill("elsewhere/a", "linked-a")
    tree.skill("elsewhere/b", "linked-b")
    link = tree.link("elsewhere/a", "ws/link")
    settings_roots = [("ws", WS)]
    allow = SkillsSettings(allow_symlink_targets=(tree.path("elsewhere"),))
    snap, _ = run(settings_roots, settings=allow)
    assert "linked-a" in names(snap)
    tree.skill("ws/group/new-one")
    touch(tree.root / "ws/group", 2_000_000_000)
    (tree.root / "ws/single/SKILL.md").unlink()
    os.rmdir(tree.root / "ws/single")
    touch(tree.root / "ws", 3_000_000_000)
    link.unlink()
    os.symlink(tree.root / "elsewhere/b", link)
    snap2, _ = run(settings_roots, settings=allow)
    assert "new-one" in names(snap2) and "single" not in names(snap2)
    assert "linked-b" in names(snap2) and "linked-a" not in names(snap2)


def test_hardlinking_an_unchanged_file_is_seen(tree: Tree, run: Run) -> None:
    path = tree.skill("ws/h")
    snap, _ = run([("ws", WS)])
    assert names(snap) == ["h"]
    os.link(path, tree.root / "copy.md")  # changes the link count (and ctime), not the content
    snap2, diags = run([("ws", WS)])
    assert names(snap2) == [] and any(d.code == "skills.hardlinked" for d in diags)


def test_files_changed_within_the_racy_window_are_never_trusted(
        tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    start = time.time_ns()
    build(tree)
    run = Run(tree, engine=SkillsEngine(FsCache(clock=lambda: start)))  # every file is "new"
    counter = Counter(monkeypatch)
    run([("ws", WS)])
    counter.reset()
    run([("ws", WS)])
    assert counter.reads == 6  # re-read: a same-tick rewrite could hide behind equal stats


def test_a_missing_root_that_appears_is_seen(tree: Tree, run: Run) -> None:
    build(tree)
    roots = [("ws", WS), ("later", WS)]
    snap, _ = run(roots)
    assert "late" not in names(snap)
    tree.skill("later/late")  # the root did not exist: its check is one lstat, and it must see this
    snap2, _ = run(roots)
    assert "late" in names(snap2)
