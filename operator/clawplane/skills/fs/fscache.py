"""File-system reads for skill discovery, cached so an unchanged tree costs only ``stat`` calls.

Every read a root scan makes goes through an ``FsView`` that records what the
result depended on: the ``lstat``/``stat`` identity (mode, device, inode, size,
mtime, ctime, link count) of each path it looked at, and each real path it
resolved. ``FsCache`` keeps, per root, the scan result with those
dependencies; the next scan of that root re-checks them and reuses the result
when none moved. Directory listings and parsed SKILL.md files are cached by the
same identities, so a changed tree re-reads only what changed.

A change inside the file system's timestamp granularity can leave mtime alone,
so any entry whose mtime is within ``racy_window_ns`` of when it was observed is
never trusted on a later scan (the "racy git" rule).

With a change feed (a long-running engine), a root's result also records which of its
reads watched folders vouch for (``fscover``); while those folders saw no event, only
the other reads (the root itself, anything outside it) are checked by ``stat``.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

from clawplane._utils.changefeed import ChangeFeed
from clawplane.skills.fs.fscover import Cover, Dep, StatKey, cover_reads, stat_key

__all__ = ["DirEntry", "FsCache", "FsView", "Kind", "StatKey", "stat_key"]

Kind = Literal["directory", "file", "symlink", "other"]
_MISSING_ERRNOS = (errno.ENOENT, errno.ENOTDIR)
_RACY_WINDOW_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class DirEntry:
    """One directory entry as ``readdir`` reports it (symlinks not followed)."""

    name: str
    kind: Kind


Observed = StatKey | str | None  # a key, "error:<errno>", or None for a missing path


def _observe(call: Callable[[str], os.stat_result], path: str) -> tuple[Observed, os.stat_result | None]:
    try:
        st = call(path)
    except OSError as exc:
        return (None if exc.errno in _MISSING_ERRNOS else f"error:{exc.errno}"), None
    return stat_key(st), st


def _realpath(path: str) -> str | None:
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, ValueError):
        return None


@dataclass(slots=True)
class _Cached:
    key: Observed
    value: Any
    trusted: bool


@dataclass(slots=True)
class _RootResult:
    deps: list[Dep]
    value: Any
    checked_pass: int = -1
    racy: bool = False
    """Saw something too fresh to trust later: good for the pass that made it, then dropped."""
    anchor: str | None = None
    """The folder the scan read below (see ``fscover.cover_reads``)."""
    cover: Cover | None = None


@dataclass
class FsCache:
    """Long-lived caches of listings, parsed files and whole-root scan results."""

    racy_window_ns: int = _RACY_WINDOW_NS
    clock: Callable[[], int] = time.time_ns
    listings: dict[str, _Cached] = field(default_factory=dict)
    files: dict[str, _Cached] = field(default_factory=dict)
    roots: dict[Hashable, _RootResult] = field(default_factory=dict)
    pass_id: int = 0
    """Roots re-checked during the current pass are trusted for the rest of it (see ``begin_pass``)."""
    feed: ChangeFeed | None = None
    """Spares the ``stat`` calls for reads under watched, unchanged folders."""
    confirmed: set[Dep] = field(default_factory=set)
    """Reads a cover checked in this pass (many roots share the folder that keeps them missing)."""

    def begin_pass(self) -> None:
        """Start a pass (e.g. one reconcile over every agent): each root is re-checked once per pass."""
        self.pass_id += 1
        self.confirmed.clear()
        if self.feed is not None:
            self.feed.drain()  # what changed before this pass: everything it trusts is judged by it

    def view(self) -> FsView:
        """A fresh recorder for one root scan."""
        return FsView(self)

    def cached_root(self, key: Hashable) -> Any | None:
        """The stored result for ``key`` if none of its dependencies changed."""
        found = self.roots.get(key)
        if found is None:
            return None
        if found.checked_pass == self.pass_id and self.pass_id > 0:
            return found.value
        if found.racy:
            del self.roots[key]
            return None
        cover, feed = found.cover, self.feed
        if cover is not None and cover.quiet() and self._confirm(cover.checks):
            found.checked_pass = self.pass_id
            return found.value
        if not _unchanged(found.deps):
            del self.roots[key]
            return None
        found.checked_pass = self.pass_id
        if feed is not None and found.anchor is not None:
            # Its checks are reads just confirmed, but for a missing root's nearest folder.
            if cover is None or not cover.intact or not self._confirm(cover.checks):
                # Watches added now count from the next pass (see ``ChangeFeed.watch``).
                found.cover = cover = cover_reads(found.deps, found.anchor, feed)
            if cover is not None:
                cover.seq = feed.seq  # every read was confirmed in this pass
        return found.value

    def _confirm(self, checks: list[Dep]) -> bool:
        """``_unchanged(checks)``, each read checked once per pass."""
        if self.pass_id <= 0:
            return _unchanged(checks)
        confirmed = self.confirmed
        for dep in checks:
            if dep not in confirmed:
                if not _unchanged([dep]):
                    return False
                confirmed.add(dep)
        return True

    def store_root(self, key: Hashable, view: FsView, value: Any, anchor: str | None = None) -> None:
        """Remember a scan result; one that saw something too fresh only for the current pass.

        A pass is one consistent look at the tree (every agent of one render), so a fresh
        checkout is scanned once per pass, not once per agent. ``anchor`` is the root
        folder the scan read below: with a feed, reads under it can be covered by watches.
        """
        current = self.pass_id if self.pass_id > 0 else -1
        if view.racy and current < 0:
            self.roots.pop(key, None)
            return
        result = self.roots[key] = _RootResult(view.deps, value, current, racy=view.racy, anchor=anchor)
        if self.feed is not None and anchor is not None and not view.racy:
            result.cover = cover_reads(view.deps, anchor, self.feed)


def _unchanged(deps: list[Dep]) -> bool:
    """Whether every recorded read would give the same answer now.

    A re-plan spends most of its skills time here (a stat per skill folder and file), so
    the common case, an ``lstat`` that succeeds, is checked inline.
    """
    lstat = os.lstat
    missing = None  # the path a realpath check just found missing (a missing root records both)
    for kind, path, observed in deps:
        if kind == "lstat" and observed.__class__ is tuple:
            try:
                st = lstat(path)
            except OSError:
                return False
            if stat_key(st) != observed:
                return False
        elif kind == "lstat" and observed is None and path == missing:
            continue
        elif kind == "folder":
            try:
                st = lstat(path)
            except OSError:
                return False
            if (st.st_dev, st.st_ino) != observed or not stat_mod.S_ISDIR(st.st_mode):
                return False
        elif kind == "realpath":
            if observed is None and _missing(path):
                missing = path
                continue  # what lstat cannot reach, realpath cannot resolve: no need to walk it
            if _realpath(path) != observed:
                return False
        elif _observe(os.lstat if kind == "lstat" else os.stat, path)[0] != observed:
            return False
    return True


def _missing(path: str) -> bool:
    try:
        os.lstat(path)
    except OSError:
        return True
    return False


class FsView:
    """The reads of one root scan, recorded as dependencies."""

    def __init__(self, cache: FsCache) -> None:
        self.cache = cache
        self.deps: list[Dep] = []
        self.racy = False
        # One clock reading per scan: a scan's start is earlier than any of its reads, so
        # judging every entry against it calls at least as much racy as reading the clock each time.
        self._fresh_since = cache.clock() - cache.racy_window_ns

    def _is_racy(self, st: os.stat_result) -> bool:
        """True when ``st`` changed so recently that a same-tick change could hide."""
        return st.st_mtime_ns >= self._fresh_since or st.st_ctime_ns >= self._fresh_since

    def _note(self, kind: str, path: str, observed: Any, st: os.stat_result | None) -> None:
        self.deps.append((kind, path, observed))
        if st is not None and self._is_racy(st):
            self.racy = True

    def lstat(self, path: str) -> os.stat_result | None:
        """``lstat`` or ``None`` (missing or unreadable)."""
        observed, st = _observe(os.lstat, path)
        self._note("lstat", path, observed, st)
        return st

    def lstat_error(self, path: str) -> tuple[os.stat_result | None, bool]:
        """``(lstat, missing)``: ``missing`` is False when the path exists but failed to stat."""
        observed, st = _observe(os.lstat, path)
        self._note("lstat", path, observed, st)
        return st, observed is None

    def stat(self, path: str) -> os.stat_result | None:
        """``stat`` (following symlinks) or ``None``."""
        observed, st = _observe(os.stat, path)
        self._note("stat", path, observed, st)
        return st

    def realpath(self, path: str) -> str | None:
        """The canonical path, or ``None`` when it cannot be resolved."""
        resolved = _realpath(path)
        self.deps.append(("realpath", path, resolved))
        return resolved

    def list_dir(self, path: str) -> list[DirEntry] | OSError:
        """Entries in ``readdir`` order, or the error that stopped the listing."""
        observed, st = _observe(os.stat, path)
        self._note("stat", path, observed, st)
        if st is None:
            return _error_for(path, observed)
        cached = self.cache.listings.get(path)
        if cached is not None and cached.trusted and cached.key == observed:
            listing: list[DirEntry] = cached.value
            return listing
        try:
            with os.scandir(path) as it:
                listing = [DirEntry(entry.name, _kind(entry)) for entry in it]
        except OSError as exc:
            return exc
        self.cache.listings[path] = _Cached(observed, listing, not self._is_racy(st))
        return listing

    def cached_file(self, path: str, st: os.stat_result, load: Callable[[], Any]) -> Any:
        """``load()`` for the file at ``path`` in state ``st``, reused while that state holds."""
        key = stat_key(st)
        cached = self.cache.files.get(path)
        if cached is not None and cached.trusted and cached.key == key:
            return cached.value
        value = load()
        trusted = not self._is_racy(st)
        self.cache.files[path] = _Cached(key, value, trusted)
        self.racy = self.racy or not trusted
        return value


def _error_for(path: str, observed: Observed) -> OSError:
    if observed is None:
        return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    code = int(str(observed).split(":", 1)[1])
    return OSError(code, os.strerror(code), path)


def _kind(entry: os.DirEntry[str]) -> Kind:
    try:
        if entry.is_symlink():
            return "symlink"
        if entry.is_dir(follow_symlinks=False):
            return "directory"
        if entry.is_file(follow_symlinks=False):
            return "file"
    except OSError:
        return "other"
    return "other"


def is_directory(st: os.stat_result) -> bool:
    """``st`` describes a directory."""
    return stat_mod.S_ISDIR(st.st_mode)
