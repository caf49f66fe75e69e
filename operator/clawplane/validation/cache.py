"""Per-file validation results, reused while a file's stat identity is unchanged.

A long-running engine re-validates a folder on every pass; files that did not change
cost one ``stat``. A file modified within the last two seconds is never trusted from
the cache, since a second edit in the same timestamp tick could leave its stat alone.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from clawplane.diagnostics import Diagnostic, Diagnostics
from clawplane.loading import SourceDocument, WalkCache, read_file
from clawplane.validation.paths import PathMemo
from clawplane.validation.result import LoadedResource
from clawplane.validation.semantic import SemanticMemo
from clawplane.validation.structure import validate_document

RACY_WINDOW_NS = 2_000_000_000
StatKey = tuple[int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class FileResult:
    """What one file yielded: documents, validated resources and per-document diagnostics."""

    documents: tuple[SourceDocument, ...]
    resources: tuple[LoadedResource | None, ...]
    diagnostics: tuple[Diagnostic, ...]


@dataclass
class ValidationCache:
    """File results keyed by path and stat identity."""

    entries: dict[str, tuple[StatKey, FileResult]] = field(default_factory=dict)
    racy_window_ns: int = RACY_WINDOW_NS
    checks: SemanticMemo = field(default_factory=SemanticMemo)
    """Semantic checks, reused for what did not change."""
    paths: PathMemo = field(default_factory=dict)
    """The paths each resource names, for the folder check (``validation.paths``)."""
    walk: WalkCache = field(default_factory=WalkCache)
    """Directory listings, so finding the files of an unchanged folder costs a ``stat`` per folder."""

    def validate_file(self, path: Path) -> FileResult:
        """The file's result, from the cache when its stat identity is unchanged."""
        key = _stat_key(path)
        name = str(path)
        hit = self.entries.get(name)
        if key is not None and hit is not None and hit[0] == key:
            return hit[1]
        result = validate_file(path)
        if key is not None and max(key[3], key[4]) + self.racy_window_ns < time.time_ns():
            self.entries[name] = (key, result)
        else:
            self.entries.pop(name, None)
        return result


def _stat_key(path: Path) -> StatKey | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def validate_file(path: Path) -> FileResult:
    """Read one file and validate each of its documents."""
    diags = Diagnostics()
    documents = read_file(path, diags)
    resources: list[LoadedResource | None] = []
    for doc in documents:
        loaded, found = validate_document(doc)
        diags.extend(found)
        resources.append(loaded)
    return FileResult(tuple(documents), tuple(resources), tuple(diags))
