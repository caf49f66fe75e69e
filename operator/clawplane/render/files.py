"""Writing rendered artifacts: atomically, privately, and only when their content changed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from clawplane._utils.atomicfile import PRIVATE_MODE, atomic_write_bytes


def write_if_changed(path: Path, content: str | bytes, *, mode: int = PRIVATE_MODE) -> bool:
    """Write ``content`` to ``path`` unless it already holds exactly that; True when written."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        current = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        current = None
    if current == data:
        _ensure_mode(path, mode)
        return False
    atomic_write_bytes(path, data, mode=mode)
    return True


def _ensure_mode(path: Path, mode: int) -> None:
    # Unchanged content is not rewritten, but a file that may hold secrets must still be private.
    current = stat.S_IMODE(path.stat().st_mode)
    if current != mode:
        os.chmod(path, mode)
