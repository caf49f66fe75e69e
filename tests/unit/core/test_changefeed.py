"""The change feed stamps each watch with the pass that drained its events, and refuses what it cannot see."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clawplane._utils.changefeed import ChangeFeed, Watch, default_budget, open_feed

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/sys/fs/inotify"), reason="Linux inotify")


def watched(feed: ChangeFeed, path: Path, *, folder: bool = True) -> Watch:
    watch = feed.watch(str(path), folder=folder)
    assert watch is not None
    return watch


def test_a_new_watch_counts_from_the_next_pass(feed: ChangeFeed, tmp_path: Path) -> None:
    feed.drain()
    watch = watched(feed, tmp_path)
    # Whatever was read in this pass before the watch existed is not vouched for.
    assert not watch.names_clean(feed.seq)
    feed.drain()
    assert watch.names_clean(feed.seq) and watch.any <= feed.seq


def test_entry_events_stamp_names_and_content_events_only_any(feed: ChangeFeed, tmp_path: Path) -> None:
    watch = watched(feed, tmp_path)
    feed.drain()
    settled = feed.seq
    (tmp_path / "a").write_text("1")
    feed.drain()
    assert watch.names == feed.seq and watch.any == feed.seq
    before = feed.seq
    (tmp_path / "a").write_text("22")
    feed.drain()
    assert (watch.names, watch.any) == (before, feed.seq)
    os.chmod(tmp_path, 0o700)  # the folder itself: its listing may be affected
    feed.drain()
    assert watch.names == feed.seq
    (tmp_path / "a").rename(tmp_path / "b")
    feed.drain()
    assert watch.names == feed.seq
    assert settled < watch.names


def test_a_drain_with_nothing_queued_stamps_nothing(feed: ChangeFeed, tmp_path: Path) -> None:
    watch = watched(feed, tmp_path)
    feed.drain()
    stamped = watch.any
    for _ in range(3):
        feed.drain()
    assert watch.any == stamped and watch.names_clean(feed.seq - 1)


def test_symlinks_missing_paths_and_wrong_types_are_refused(feed: ChangeFeed, tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "dir")
    (tmp_path / "filelink").symlink_to(tmp_path / "file")
    assert feed.watch(str(tmp_path / "link")) is None
    assert feed.watch(str(tmp_path / "filelink"), folder=False) is None
    assert feed.watch(str(tmp_path / "missing")) is None
    assert feed.watch(str(tmp_path / "file")) is None  # not a folder
    assert feed.watch(str(tmp_path / "bad\0name")) is None
    assert feed.watch(str(tmp_path / "dir")) is not None
    assert feed.watch(str(tmp_path / "file"), folder=False) is not None


def test_a_file_watch_sees_a_write_through_another_link(feed: ChangeFeed, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    target = tmp_path / "a" / "SKILL.md"
    target.write_text("one")
    folder, file = watched(feed, tmp_path / "a"), watched(feed, target, folder=False)
    feed.drain()
    os.link(target, tmp_path / "b" / "other")
    (tmp_path / "b" / "other").write_text("changed elsewhere")
    feed.drain()
    # The folder's watch never hears of it; the file's own watch does.
    assert folder.any < feed.seq
    assert file.any == feed.seq


def test_one_inode_reached_twice_shares_its_watch(feed: ChangeFeed, tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "via").symlink_to(tmp_path)
    first = watched(feed, tmp_path / "real")
    assert feed.watch(str(tmp_path / "via" / "real")) is first
    assert len(feed) == 1


def test_the_watch_follows_the_folder_not_the_name(feed: ChangeFeed, tmp_path: Path) -> None:
    old = watched(feed, tmp_path)
    (tmp_path / "d").mkdir()
    inner = watched(feed, tmp_path / "d")
    feed.drain()
    (tmp_path / "d").rename(tmp_path / "moved")
    (tmp_path / "d").mkdir()
    feed.drain()
    assert inner.names == feed.seq and old.names == feed.seq
    assert feed.watch(str(tmp_path / "d")) is not inner  # asked again: the folder now there


def test_a_removed_folder_loses_its_watch(feed: ChangeFeed, tmp_path: Path) -> None:
    (tmp_path / "gone").mkdir()
    watch = watched(feed, tmp_path / "gone")
    feed.drain()
    (tmp_path / "gone").rmdir()
    feed.drain()
    assert not watch.alive and not watch.names_clean(feed.seq)
    assert len(feed) == 0


def test_a_refresh_marks_everything_changed(tmp_path: Path) -> None:
    feed = open_feed(refresh_s=0.0)
    assert feed is not None
    try:
        watch = watched(feed, tmp_path)
        feed.drain()
        feed.drain()
        # Nothing happened, yet each drain asks every consumer to confirm by stat.
        assert watch.names == feed.seq
    finally:
        feed.close()


def test_the_budget_bounds_the_watches(tmp_path: Path) -> None:
    feed = open_feed(budget=1)
    assert feed is not None
    try:
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        assert feed.watch(str(tmp_path / "a")) is not None
        assert feed.watch(str(tmp_path / "b")) is None
        assert feed.watch(str(tmp_path / "a")) is not None  # the one it has stays usable
    finally:
        feed.close()
    assert 0 < default_budget() <= 65_536


def test_only_local_file_systems_are_watched(feed: ChangeFeed) -> None:
    # procfs changes without events, as a network file system changes from another machine.
    assert feed.watch("/proc/self") is None
    assert len(feed) == 0


def test_a_closed_feed_trusts_nothing(tmp_path: Path) -> None:
    feed = open_feed()
    assert feed is not None
    watch = watched(feed, tmp_path)
    feed.drain()
    feed.close()
    assert feed.closed and not watch.alive
    assert feed.watch(str(tmp_path)) is None
    assert feed.drain() == 2


def test_events_a_watcher_takes_off_the_queue_still_stamp_the_watches(feed: ChangeFeed, tmp_path: Path) -> None:
    feed.subscribe()
    watch = watched(feed, tmp_path)
    feed.drain()
    (tmp_path / "x").write_text("1")
    assert any(name == b"x" for _wd, _mask, name in feed.events())
    assert feed.events() == []  # each event is handed over once
    feed.drain()
    assert watch.names == feed.seq  # the pass after they were read


def test_a_watcher_that_left_no_longer_collects_events(feed: ChangeFeed, tmp_path: Path) -> None:
    feed.subscribe()
    watched(feed, tmp_path)
    feed.unsubscribe()
    (tmp_path / "x").write_text("1")
    feed.drain()
    feed.subscribe()
    assert feed.events() == []  # nothing was kept for nobody while it was away


def test_a_refused_watch_says_why(feed: ChangeFeed) -> None:
    with pytest.raises(OSError, match="not on a local file system") as refused:
        feed.add("/proc")
    assert refused.value.filename == "/proc"
