"""Writing rendered artifacts: atomically, privately, only when their content changed, and only
where no other user could aim the write.

A tree of outputs (``--out-dir``, ``import --out``) is opened once (``open_dir``: a real
directory of ours that nobody else can write or swap) and every file is written relative to
it: subfolders opened without following links, files replaced by an ``O_EXCL`` temp file
renamed into place. A link planted anywhere in the tree is refused, never followed.
"""

from __future__ import annotations

from pathlib import Path

from clawplane._utils.atomicfile import PRIVATE_MODE
from clawplane._utils.safedir import SafeDir, open_dir

__all__ = ["open_out_dir", "remove_under", "write_if_changed", "write_under"]


def open_out_dir(path: Path, *, option: str = "--out-dir DIR", private: bool = True) -> SafeDir:
    """The output folder ``path`` (made 0700 if missing), refused if another user could aim writes there.

    Raises:
        OSError: It cannot be made, or is not safe (``UnsafePathError``, with the cause and the fix).
    """
    return open_dir(path, option=option, private=private)


def write_if_changed(
    path: Path, content: str | bytes, *, mode: int = PRIVATE_MODE, option: str = "--out DIR"
) -> bool:
    """Write ``content`` to ``path`` unless it already holds exactly that; True when written.

    ``path``'s folder is checked like any output folder (``option`` names the way out).
    """
    with open_out_dir(path.parent, option=option, private=False) as folder:
        return write_under(folder, path.name, content, mode=mode)


def write_under(root: SafeDir, rel: str, content: str | bytes, *, mode: int = PRIVATE_MODE) -> bool:
    """Write ``content`` to ``rel`` (``agents/a/tools.json``) below ``root``; True unless unchanged."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    folder, _, name = rel.rpartition("/")
    if not folder:
        return root.write_if_changed(name, data, mode=mode)
    with root.child(folder) as parent:
        return parent.write_if_changed(name, data, mode=mode)


def remove_under(root: SafeDir, rel: str) -> None:
    """Remove the file ``rel`` below ``root`` (a link is removed, not followed); a missing one is fine."""
    folder, _, name = rel.rpartition("/")
    if not folder:
        root.unlink(name)
        return
    try:
        parent = root.child(folder, create=False)
    except FileNotFoundError:
        return
    with parent:
        parent.unlink(name)
