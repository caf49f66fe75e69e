"""Private files and folders: 0700 folders and 0600 files, whatever the umask.

``Path.mkdir(parents=True)`` creates the missing parents with the umask's permissions (0777
under umask 000); ``make_private_dirs`` creates each missing component itself with 0700.
Folders that another user could reach (the state directory, rendered outputs) are opened
with ``safedir.open_dir`` instead, which also refuses links and folders that are not ours.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600

__all__ = ["PRIVATE_DIR_MODE", "PRIVATE_FILE_MODE", "make_private_dirs", "open_private"]


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents, each new one with mode 0700."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            # mkdir's mode is masked by the umask, which can only take bits away from 0700.
            os.mkdir(directory, PRIVATE_DIR_MODE)


def open_private(path: Path, flags: int) -> int:
    """``os.open`` that creates ``path`` 0600 and tightens an existing one (never through a link)."""
    fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
    with contextlib.suppress(OSError):
        if stat.S_IMODE(os.fstat(fd).st_mode) & ~PRIVATE_FILE_MODE:
            os.fchmod(fd, PRIVATE_FILE_MODE)
    return fd
