"""Budgeted listings of candidate sub-folders (OpenClaw's ``listChildDirectories`` and helpers).

Names come back in ``readdir`` order as Node gives it (sorted by their UTF-8
bytes); only folders count (symlinks followed when asked), dot-folders and
``node_modules`` are skipped, and each scan is bounded: a raw-entry cap per
folder (10 × the candidate limit, clamped to 1,000–10,000) and, per root, a
budget of folder scans and raw entries. Running out truncates silently, as in
OpenClaw; discovery reports it.
"""

from __future__ import annotations

import os
import stat as stat_mod
from dataclasses import dataclass, field

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.skills import codes
from clawplane.skills.fs.fscache import DirEntry
from clawplane.skills.fs.pathfacts import PathFacts, child_path

__all__ = ["MAX_GROUPED_DEPTH", "Budget", "ChildLister", "Listing", "new_budget", "raw_limit"]

MAX_GROUPED_DEPTH = 6
_MIN_RAW_ENTRIES = 1000
_MAX_RAW_ENTRIES = 10000


@dataclass(slots=True)
class Budget:
    """What one root's scan may still spend: folder scans and raw directory entries."""

    scans: int
    raw: int
    truncated: bool = False


@dataclass(slots=True)
class Listing:
    """Candidate sub-folder names of one folder, and how much of it was read."""

    dirs: list[str] = field(default_factory=list)
    scanned: int = 0
    truncated: bool = False


def raw_limit(max_dirs: int) -> int:
    """Raw entries read per folder: 10 × the candidate limit, clamped to 1,000–10,000."""
    if max_dirs <= 0:
        return 0
    return min(_MAX_RAW_ENTRIES, max(_MIN_RAW_ENTRIES, max_dirs * 10))


def new_budget(max_dirs: int) -> Budget:
    """A root's budget: 6 scans per candidate, raw entries for each of them plus one."""
    n = max(0, max_dirs)
    return Budget(scans=n * MAX_GROUPED_DEPTH, raw=raw_limit(n) * (n + 1))


class ChildLister:
    """Lists candidate sub-folders for one root scan, noting entry kinds in ``facts``."""

    def __init__(self, facts: PathFacts, diags: list[Diagnostic]) -> None:
        self.facts = facts
        self.view = facts.view
        self.diags = diags

    def has_symlink_child(self, folder: str, skip: str | None, max_entries: int) -> bool:
        """Whether one of the first ``max_entries`` entries is a symlink (not ``skip``/hidden)."""
        if max_entries <= 0:
            return False
        entries = self.view.list_dir(folder)
        if isinstance(entries, OSError):
            return False
        for entry in entries[:max_entries]:  # opendir order, as OpenClaw reads it
            if entry.name == skip or entry.name.startswith(".") or entry.name == "node_modules":
                continue
            if entry.kind == "symlink":
                return True
        return False

    def child_dirs(
        self, folder: str, budget: Budget | None, *, follow: bool, max_dirs: int, report: bool = True
    ) -> Listing:
        """OpenClaw's ``listChildDirectories``: candidate sub-folders within the budgets."""
        if budget is not None and (budget.scans <= 0 or budget.raw <= 0):
            budget.truncated = True
            return Listing()
        if budget is not None:
            budget.scans -= 1
        max_entries = raw_limit(max_dirs)
        if budget is not None:
            max_entries = min(max_entries, budget.raw)
        entries = self.view.list_dir(folder)
        if isinstance(entries, OSError):
            if report and not isinstance(entries, FileNotFoundError | NotADirectoryError):
                self.diags.append(
                    codes.skill_diagnostic(
                        codes.UNREADABLE, f"cannot list {folder}: {entries.strerror}", folder
                    )
                )
            return Listing()
        result = self._select_dirs(folder, sorted(entries, key=_bytes_key), follow, max_entries, report)
        if budget is not None:
            budget.raw = max(0, budget.raw - result.scanned)
            budget.truncated = budget.truncated or result.truncated
        return result

    def _select_dirs(
        self, folder: str, entries: list[DirEntry], follow: bool, max_entries: int, report: bool
    ) -> Listing:
        result = Listing()
        for entry in entries:
            if result.scanned >= max_entries:
                result.truncated = True
                break
            result.scanned += 1
            path = child_path(folder, entry.name)
            self.facts.note_kind(path, entry.kind)
            if entry.kind == "symlink" and not follow:
                continue
            if entry.kind not in ("directory", "symlink") or entry.name.startswith("."):
                continue
            if entry.name == "node_modules":
                continue
            if entry.kind == "directory" or self._symlink_is_dir(path, report):
                result.dirs.append(entry.name)
        return result

    def _symlink_is_dir(self, path: str, report: bool) -> bool:
        st = self.view.stat(path)
        if st is None:
            if report:
                self.diags.append(
                    codes.skill_diagnostic(
                        codes.UNRESOLVED_PATH, f"cannot follow symlink {path}", path, severity=Severity.INFO
                    )
                )
            return False
        return stat_mod.S_ISDIR(st.st_mode)


def _bytes_key(entry: DirEntry) -> bytes:
    # Node's readdirSync returns names sorted by strcmp on their UTF-8 bytes.
    return os.fsencode(entry.name)
