"""Atomic, private writes that happen only when the content changed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from clawplane._utils import atomicfile
from clawplane.render import write_if_changed


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_new_file_private(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "openclaw.json"
    assert write_if_changed(target, "{}\n") is True
    assert target.read_text() == "{}\n"
    assert _mode(target) == 0o600


def test_unchanged_content_is_not_rewritten(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    write_if_changed(target, "same")
    before = target.stat().st_ino
    assert write_if_changed(target, "same") is False
    assert target.stat().st_ino == before
    assert write_if_changed(target, b"other") is True
    assert target.read_bytes() == b"other"
    assert target.stat().st_ino != before  # replaced by rename, never edited in place


def test_unchanged_file_is_made_private(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("x")
    os.chmod(target, 0o644)
    assert write_if_changed(target, "x") is False
    assert _mode(target) == 0o600


def test_custom_mode(tmp_path: Path) -> None:
    target = tmp_path / "prompt.txt"
    write_if_changed(target, "x", mode=0o644)
    assert _mode(target) == 0o644


def test_failed_write_leaves_old_content_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a.txt"
    write_if_changed(target, "old")

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(atomicfile.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_if_changed(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
