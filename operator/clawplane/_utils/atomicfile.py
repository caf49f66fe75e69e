"""Atomic file replacement: write a temp file beside the target, fsync it, rename it over.

Readers of the target see either the old content or the new one, never a partial file,
and a crash leaves at worst a stray temp file (named ``.<name>.*.tmp``) next to it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from clawplane._utils.private import make_private_dirs

PRIVATE_MODE = 0o600


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = PRIVATE_MODE) -> None:
    """Replace ``path`` with ``data`` atomically; the file gets ``mode`` before any byte is written."""
    make_private_dirs(path.parent)
    # The temp file must be in the same directory: rename is only atomic within one filesystem.
    fd, tmp_name = _mkstemp(path)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(path.parent)


def _mkstemp(path: Path) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; some filesystems refuse to open directories.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
