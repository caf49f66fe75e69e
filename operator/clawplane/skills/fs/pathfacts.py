"""What one root scan knows about paths: entry kinds, real paths, SKILL.md presence.

OpenClaw calls ``realpath`` on every candidate; here a child's real path is
derived from its parent's when the parent listing says the child is not a
symlink (the listing is re-validated by the parent's ``stat``), which keeps a
rescan of an unchanged tree down to ``stat`` calls.
"""

from __future__ import annotations

import os
import stat as stat_mod

from clawplane.skills.fs.fscache import FsView, Kind

__all__ = ["PathFacts", "is_path_inside"]


def child_path(parent: str, name: str) -> str:
    """``os.path.join(parent, name)`` for an absolute ``parent`` and a plain entry ``name``.

    A cold scan joins a few paths per skill; ``posixpath.join``'s generality costs more
    than the concatenation it comes down to here.
    """
    return parent + name if parent[-1:] == "/" else parent + "/" + name


def is_path_inside(root: str, target: str) -> bool:
    """True when ``target`` is ``root`` or below it (both absolute and normalized)."""
    if target == root:
        return True
    prefix = root if root.endswith("/") else root + "/"
    return target.startswith(prefix)


class PathFacts:
    """Memoized facts for one scan, every lookup recorded through ``view``."""

    def __init__(self, view: FsView) -> None:
        self.view = view
        self._kinds: dict[str, Kind] = {}
        self._reals: dict[str, str | None] = {}
        self._skill_md: dict[str, tuple[os.stat_result | None, bool]] = {}

    def note_kind(self, path: str, kind: Kind) -> None:
        """Remember the ``readdir`` kind of ``path``."""
        self._kinds[path] = kind

    def kind(self, path: str) -> Kind | None:
        """The remembered kind of ``path``, or ``None``."""
        return self._kinds.get(path)

    def is_symlink(self, path: str) -> bool:
        """Whether ``path`` itself is a symlink (``lstat``)."""
        kind = self._kinds.get(path)
        if kind is not None:
            return kind == "symlink"
        st = self.view.lstat(path)
        return st is not None and stat_mod.S_ISLNK(st.st_mode)

    def set_real(self, path: str, real: str | None) -> None:
        """Record a known real path."""
        self._reals[path] = real

    def real(self, path: str) -> str | None:
        """``realpath(path)``, derived from the parent when the listing allows it."""
        if path in self._reals:
            return self._reals[path]
        parent, name = os.path.split(path)
        parent_real = self._reals.get(parent)
        if parent_real is not None and self._kinds.get(path) in ("directory", "file"):
            resolved: str | None = child_path(parent_real, name)
        else:
            resolved = self.view.realpath(path)
        self._reals[path] = resolved
        return resolved

    def skill_md(self, skill_dir: str) -> tuple[os.stat_result | None, bool]:
        """``(lstat of SKILL.md, present)``; an existing but unreadable SKILL.md counts as present."""
        found = self._skill_md.get(skill_dir)
        if found is None:
            path = child_path(skill_dir, "SKILL.md")
            st, missing = self.view.lstat_error(path)
            found = (st, not missing)
            self._skill_md[skill_dir] = found
            if st is not None:
                self._kinds[path] = _kind_of(st)
        return found

    def has_skill_md(self, skill_dir: str) -> bool:
        """OpenClaw's ``hasSkillFileCandidate``."""
        return self.skill_md(skill_dir)[1]


def _kind_of(st: os.stat_result) -> Kind:
    if stat_mod.S_ISLNK(st.st_mode):
        return "symlink"
    if stat_mod.S_ISDIR(st.st_mode):
        return "directory"
    if stat_mod.S_ISREG(st.st_mode):
        return "file"
    return "other"
