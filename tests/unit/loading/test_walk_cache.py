"""Finding resource files: the same files in the same order with or without the listing cache."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawplane._utils.changefeed import inotify_available, open_feed
from clawplane.diagnostics import Diagnostics
from clawplane.loading import walk as walk_mod
from clawplane.loading.sources import discover_files
from clawplane.loading.walk import WalkCache, walk_resource_files


def tree(root: Path) -> None:
    for rel in ["a.yaml", "b.yml", ".hidden.yaml", "notes.txt", "sub/c.yaml", "sub/deeper/d.yaml",
                "skills/one/SKILL.md", "skills/one/inside.yaml", "node_modules/x.yaml", ".git/y.yaml"]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("kind: X\n")


def plain_walk(root: Path) -> list[Path]:
    """What ``os.walk`` gives with the documented rules (the behaviour before the cache)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        if "SKILL.md" in filenames and Path(dirpath) != root:
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if d not in walk_mod.SKIPPED_DIRS and not d.startswith("."))
        found += [Path(dirpath) / n for n in sorted(filenames)
                  if n.endswith((".yaml", ".yml")) and not n.startswith(".")]
    return found


class Listings:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = os.scandir

        def counted(path: str) -> object:
            self.count += 1
            return real(path)

        monkeypatch.setattr(walk_mod.os, "scandir", counted)


def test_the_walk_matches_os_walk(tmp_path: Path) -> None:
    tree(tmp_path)
    files, links = walk_resource_files(tmp_path)
    assert files == plain_walk(tmp_path)
    assert not links
    assert (tmp_path / "skills" / "one" / "inside.yaml") not in files


def test_unchanged_folders_are_not_listed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree(tmp_path)
    cache = WalkCache(racy_window_ns=0)
    first, _ = walk_resource_files(tmp_path, cache)
    listings = Listings(monkeypatch)
    again, _ = walk_resource_files(tmp_path, cache)
    assert again == first
    assert listings.count == 0


@pytest.fixture(params=["stat", pytest.param("feed", marks=pytest.mark.skipif(
    not inotify_available(), reason="the change feed is Linux inotify"))])
def cache(request: pytest.FixtureRequest) -> Iterator[WalkCache]:
    """A listing cache that confirms by ``stat``, or one that trusts a change feed."""
    feed = open_feed() if request.param == "feed" else None
    assert request.param == "stat" or feed is not None
    yield WalkCache(racy_window_ns=0, feed=feed)
    if feed is not None:
        feed.close()


def test_every_change_is_seen(tmp_path: Path, cache: WalkCache) -> None:
    tree(tmp_path)
    for _ in range(3):  # with a feed: cold, confirmed, then trusted
        walk_resource_files(tmp_path, cache)
    (tmp_path / "sub" / "deeper" / "new.yaml").write_text("kind: X\n")
    (tmp_path / "skills" / "one" / "SKILL.md").unlink()  # no longer a skill folder
    (tmp_path / "b.yml").unlink()
    files, _ = walk_resource_files(tmp_path, cache)
    assert files == plain_walk(tmp_path)
    assert tmp_path / "skills" / "one" / "inside.yaml" in files


def test_with_a_feed_an_unchanged_walk_stats_only_the_root(
    tmp_path: Path, cache: WalkCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree(tmp_path)
    for _ in range(3):
        first, _ = walk_resource_files(tmp_path, cache)
    stats: list[str] = []
    real = os.stat
    monkeypatch.setattr(walk_mod.os, "stat", lambda path, *a, **k: stats.append(path) or real(path, *a, **k))
    assert walk_resource_files(tmp_path, cache)[0] == first
    if cache.feed is not None:
        assert stats == [str(tmp_path)]  # where it still leads is checked; below it, the watches
    else:
        assert sorted(stats) == sorted(str(tmp_path / p) for p in ("", "sub", "sub/deeper", "skills", "skills/one"))


def test_a_folder_renamed_under_a_trusted_parent_is_seen(tmp_path: Path, cache: WalkCache) -> None:
    tree(tmp_path)
    for _ in range(3):
        walk_resource_files(tmp_path, cache)
    (tmp_path / "sub").rename(tmp_path / "gone")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "deeper" / "other.yaml").write_text("kind: X\n")
    files, _ = walk_resource_files(tmp_path, cache)
    assert files == plain_walk(tmp_path)


def test_fresh_folders_are_not_trusted(tmp_path: Path) -> None:
    tree(tmp_path)
    cache = WalkCache()  # the default racy window: everything here was just written
    walk_resource_files(tmp_path, cache)
    assert cache.entries == {}


def test_symlinks_are_reported_and_their_folders_listed_every_time(tmp_path: Path) -> None:
    tree(tmp_path)
    os.symlink(tmp_path / "a.yaml", tmp_path / "sub" / "alias.yaml")
    os.symlink(tmp_path / "sub", tmp_path / "loop")
    cache = WalkCache(racy_window_ns=0)
    files, links = walk_resource_files(tmp_path, cache)
    assert links
    assert files == plain_walk(tmp_path)
    assert str(tmp_path) not in cache.entries and str(tmp_path / "sub") not in cache.entries
    # The duplicate through the link is dropped, as before.
    unique = discover_files([tmp_path], Diagnostics(), cache)
    assert tmp_path / "sub" / "alias.yaml" not in unique and tmp_path / "a.yaml" in unique
