"""Folders written through their descriptors: links refused, modes private, swaps seen.

The second user of these cases is simulated by ownership and mode bits on folders the test
makes (a real second user is in tests/faults/test_state_folder_aiming.py).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from clawplane._utils.dirtrust import trust_tree
from clawplane._utils.safedir import UnsafePathError, open_dir, write_file


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_missing_folders_are_made_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        with open_dir(tmp_path / "a" / "b") as folder, folder.child("c/d") as inner:
            inner.write_atomic("f", b"x")
    finally:
        os.umask(old)
    for path in (tmp_path / "a", tmp_path / "a/b", tmp_path / "a/b/c", tmp_path / "a/b/c/d"):
        assert _mode(path) == 0o700, path
    assert _mode(tmp_path / "a/b/c/d/f") == 0o600


def test_a_folder_that_is_a_link_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(UnsafePathError, match="is a symbolic link"):
        open_dir(tmp_path / "link")
    with open_dir(tmp_path / "real") as folder:
        (tmp_path / "real" / "sub").symlink_to(target)
        with pytest.raises(UnsafePathError, match="sub is a symbolic link"):
            folder.child("sub/deeper")
    assert list(target.iterdir()) == []


def test_links_to_files_are_neither_followed_nor_replaced(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("mine")
    victim.chmod(0o644)
    with open_dir(tmp_path / "state") as folder:
        (tmp_path / "state" / "log").symlink_to(victim)
        with pytest.raises(UnsafePathError, match="log is a symbolic link"):
            folder.open_file("log", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        with pytest.raises(UnsafePathError, match="log is a symbolic link"):
            folder.write_atomic("log", b"new")
        with pytest.raises(UnsafePathError, match="log is a symbolic link"):
            folder.write_if_changed("log", b"new")
        with pytest.raises(UnsafePathError, match="log is a symbolic link"):
            folder.check_file("log")
        folder.tighten("log")  # a link is left alone, its target too
    assert victim.read_text() == "mine" and _mode(victim) == 0o644
    assert (tmp_path / "state" / "log").is_symlink()


def test_a_hard_link_or_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("x")
    with open_dir(tmp_path / "state") as folder:
        os.link(outside, tmp_path / "state" / "linked")
        with pytest.raises(UnsafePathError, match="hard links"):
            folder.open_file("linked", os.O_WRONLY)
        os.mkfifo(tmp_path / "state" / "pipe")
        with pytest.raises(UnsafePathError, match="not a regular file"):
            folder.open_file("pipe", os.O_WRONLY)


def test_dotdot_cannot_leave_the_folder(tmp_path: Path) -> None:
    with open_dir(tmp_path / "state") as folder, pytest.raises(UnsafePathError, match="leaves"):
        folder.child("a/../../b")


def test_a_folder_others_can_write_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(UnsafePathError, match="is writable by every user: another user could aim"):
        open_dir(shared)
    assert _mode(shared) == 0o777
    # Below it: the folder could be swapped, and nothing is made there.
    with pytest.raises(UnsafePathError, match="has no sticky bit: another user could replace"):
        open_dir(shared / "state")
    assert not (shared / "state").exists()


def test_a_sticky_shared_parent_is_fine_for_what_is_ours(tmp_path: Path) -> None:
    shared = tmp_path / "sticky"
    shared.mkdir()
    shared.chmod(0o1777)
    with open_dir(shared / "state") as folder:
        folder.write_atomic("f", b"x")
    assert _mode(shared / "state") == 0o700
    write_file(shared / "plan.json", b"{}", option="--out FILE")
    assert (shared / "plan.json").read_bytes() == b"{}"


def test_an_existing_private_folder_is_tightened(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir(mode=0o755)
    with open_dir(tmp_path / "state") as folder:
        (tmp_path / "state" / "out").mkdir(mode=0o755)
        folder.child("out").close()
    assert _mode(tmp_path / "state") == 0o700 and _mode(tmp_path / "state" / "out") == 0o700


def test_a_trusted_tree_is_taken_as_deployed(tmp_path: Path) -> None:
    volume = tmp_path / "volume"
    volume.mkdir()
    volume.chmod(0o777)  # an emptyDir
    trust_tree(volume)
    with open_dir(volume / "namespaces" / "team") as folder:
        folder.write_atomic("f", b"x")
    assert _mode(volume) == 0o777 and _mode(volume / "namespaces") == 0o700
