"""Which recorded reads a change feed may vouch for: only those an event would report."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clawplane._utils.changefeed import ChangeFeed
from clawplane.skills.fs.fscover import Dep, cover_reads, stat_key

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/sys/fs/inotify"), reason="Linux inotify")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "group" / "one").mkdir(parents=True)
    (tmp_path / "root" / "group" / "one" / "SKILL.md").write_text("x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "file").write_text("y")
    (tmp_path / "root" / "filelink").symlink_to(tmp_path / "outside" / "file")
    (tmp_path / "root" / "dirlink").symlink_to(tmp_path / "outside")
    return tmp_path / "root"


def lstat(path: Path) -> Dep:
    return ("lstat", str(path), stat_key(os.lstat(path)))


def stat(path: Path) -> Dep:
    return ("stat", str(path), stat_key(os.stat(path)))


def checked(deps: list[Dep], anchor: Path, feed: ChangeFeed) -> list[Dep]:
    cover = cover_reads(deps, str(anchor), feed)
    assert cover is not None
    return cover.checks


def test_folders_files_symlinks_and_missing_names_below_the_root_are_covered(root: Path, feed: ChangeFeed) -> None:
    deps = [
        ("realpath", str(root), str(root)),
        stat(root),
        stat(root / "group"),
        lstat(root / "group" / "one" / "SKILL.md"),
        ("lstat", str(root / "group" / "SKILL.md"), None),
        lstat(root / "filelink"),
        ("realpath", str(root / "group" / "one"), str(root / "group" / "one")),
    ]
    cover = cover_reads(deps, str(root), feed)
    assert cover is not None
    # The root's own reads are checked each time: nothing above it is watched.
    assert cover.checks == deps[:2]
    assert len(cover.contents) == 1  # SKILL.md's own watch: a write through another link reaches it
    assert len(cover.names) == 3  # root, group, group/one


@pytest.mark.parametrize("make", [
    # ``stat`` follows a symlink whose target can change with no event below the root.
    lambda root: stat(root / "filelink"),
    lambda root: ("stat", str(root / "group" / "gone"), None),  # might be a dangling symlink
    lambda root: stat(root / "dirlink"),  # a folder, but through a symlink
    lambda root: lstat(root / "dirlink" / "file"),  # below a symlinked folder
    lambda root: ("realpath", str(root / "group" / "one"), "/somewhere/else"),
    lambda root: ("lstat", str(root / "group"), "error:13"),
    lambda root: lstat(root.parent / "outside" / "file"),  # outside the root
])
def test_reads_no_watch_would_report_are_checked(root: Path, feed: ChangeFeed, make: object) -> None:
    dep = make(root)  # type: ignore[operator]
    deps = [("realpath", str(root), str(root)), stat(root), dep]
    assert dep in checked(deps, root, feed)


def test_a_realpath_needs_the_roots_own_realpath(root: Path, feed: ChangeFeed) -> None:
    dep = ("realpath", str(root / "group"), str(root / "group"))
    assert dep in checked([stat(root), dep], root, feed)


def test_a_file_with_a_second_link_is_still_covered_by_its_own_watch(root: Path, feed: ChangeFeed) -> None:
    skill = root / "group" / "one" / "SKILL.md"
    os.link(skill, root.parent / "outside" / "second")
    cover = cover_reads([stat(root), lstat(skill)], str(root), feed)
    assert cover is not None and cover.checks == [stat(root)] and len(cover.contents) == 1


def test_a_missing_root_is_kept_missing_by_its_nearest_folder(tmp_path: Path, feed: ChangeFeed) -> None:
    (tmp_path / "ws").mkdir()
    missing = tmp_path / "ws" / "agent" / "skills"
    deps: list[Dep] = [("realpath", str(missing), None), ("lstat", str(missing), None)]
    cover = cover_reads(deps, str(missing), feed)
    assert cover is not None
    st = os.lstat(tmp_path / "ws")
    assert cover.checks == [("folder", str(tmp_path / "ws"), (st.st_dev, st.st_ino))]
    assert len(cover.names) == 1 and not cover.contents


def test_a_missing_root_behind_a_symlink_is_not_covered(tmp_path: Path, feed: ChangeFeed) -> None:
    (tmp_path / "target").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "target")
    missing = tmp_path / "link" / "skills"
    assert cover_reads([("lstat", str(missing), None)], str(missing), feed) is None


def test_roots_that_are_not_absolute_and_normal_are_not_covered(root: Path, feed: ChangeFeed) -> None:
    assert cover_reads([stat(root)], "relative/root", feed) is None
    assert cover_reads([stat(root)], str(root) + "/../root", feed) is None
    assert cover_reads([stat(root)], "/", feed) is None
