"""A flood of file events overflows the kernel's inotify queue: the events after it are lost.

A watching engine must then stop trusting every watch and confirm by ``stat``, or a skill
edited during the flood would stay stale in every later plan.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clawplane._utils.changefeed import open_feed
from clawplane.reconcile.engine import Engine
from clawplane.state import StateDB
from clawplane.workspace import Workspace

LIMIT_FILE = Path("/proc/sys/fs/inotify/max_queued_events")
HEAD = "apiVersion: clawplane.dev/v1alpha1\n"

pytestmark = pytest.mark.skipif(
    not LIMIT_FILE.exists() or int(LIMIT_FILE.read_text()) > 100_000,
    reason="needs Linux inotify with a queue small enough to overflow quickly",
)


def flood(folder: Path) -> None:
    """More entry events than the queue holds (distinct names: the kernel merges repeats)."""
    for index in range(int(LIMIT_FILE.read_text()) + 64):
        os.close(os.open(folder / f"f{index}", os.O_CREAT | os.O_WRONLY, 0o600))


def test_an_overflow_marks_every_watch_changed(tmp_path: Path) -> None:
    feed = open_feed()
    assert feed is not None
    try:
        (tmp_path / "noisy").mkdir()
        (tmp_path / "quiet").mkdir()
        quiet = feed.watch(str(tmp_path / "quiet"))
        assert quiet is not None and feed.watch(str(tmp_path / "noisy")) is not None
        feed.drain()
        flood(tmp_path / "noisy")
        feed.drain()
        assert quiet.names == feed.seq  # nothing happened there, but nobody can know that
    finally:
        feed.close()


def test_a_skill_edited_after_the_queue_overflowed_is_still_seen(tmp_path: Path) -> None:
    root = tmp_path / "folder"
    (root / "skills" / "alpha").mkdir(parents=True)
    (root / "junk").mkdir()
    skill = root / "skills" / "alpha" / "SKILL.md"
    skill.write_text("---\nname: alpha\ndescription: First.\n---\nBody\n")
    (root / "gateway.yaml").write_text(
        HEAD + "kind: Gateway\nmetadata:\n  name: default\nspec:\n  skills:\n    load:\n"
        "      extraDirs: [./skills]\n"
    )
    (root / "agents.yaml").write_text(HEAD + "kind: Agent\nmetadata:\n  name: main\nspec:\n  skills: [alpha]\n")
    ws = Workspace.for_folder(root)
    db = StateDB.open(ws.state_dir)
    engine = Engine(ws, watch=True)
    assert engine.feed is not None
    engine.validation_cache.walk.racy_window_ns = 0
    engine.renderer.engine.cache.racy_window_ns = 0
    for _ in range(3):  # cold, confirmed, then trusted on the watches alone
        engine.plan(db)
    flood(root / "junk")
    skill.write_text("---\nname: alpha\ndescription: Changed while the queue was full.\n---\nBody\n")
    warm = engine.plan(db)
    assert "Changed while the queue was full." in engine.renderer.snapshots["main"].prompt.text
    assert warm.outputs == Engine(ws).plan(db).outputs
