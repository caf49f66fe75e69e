"""Walking a folder for resource files, with directory listings reused while a directory is unchanged.

A folder often holds a large skill tree beside its resources; a long-running engine
walks it on every pass. Adding, removing or renaming an entry changes its directory's
mtime, so a listing is reused while the directory's stat identity is unchanged and it
was observed outside the racy window (a change within one timestamp tick could leave
the mtime alone). Listings with symbolic links are never reused: what a link points to
can change without its directory changing.

With a change feed (a long-running engine), a directory reached through reused listings
is not even ``stat``-ed while its watch saw no entry come, go or move since its listing
was last confirmed: a re-plan of an unchanged skill tree costs no system call per folder.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from clawplane._utils.changefeed import ChangeFeed, Watch

__all__ = ["WalkCache", "walk_resource_files"]

RACY_WINDOW_NS = 2_000_000_000
# Folders that never hold resources: VCS and tool state, dependencies, our own state.
SKIPPED_DIRS = frozenset({".git", ".clawplane", "node_modules", "__pycache__", ".venv"})
YAML_SUFFIXES = (".yaml", ".yml")
_DirKey = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class _Listing:
    dirs: tuple[str, ...]
    """Subdirectories to descend into, sorted (symlinked ones are listed but not followed)."""
    files: tuple[str, ...]
    """Resource file names, sorted."""
    skill: bool
    """Holds a SKILL.md: a skill folder, never descended into."""
    links: bool


@dataclass(slots=True)
class _Entry:
    key: _DirKey
    listing: _Listing
    seq: int
    """The feed's pass in which the listing was last confirmed."""
    watch: Watch | None


@dataclass
class WalkCache:
    """Directory listings by path and stat identity."""

    entries: dict[str, _Entry] = field(default_factory=dict)
    racy_window_ns: int = RACY_WINDOW_NS
    feed: ChangeFeed | None = None
    """Lets listings of watched, unchanged directories be reused without a ``stat``."""


def walk_resource_files(root: Path, cache: WalkCache | None = None) -> tuple[list[Path], bool]:
    """Resource files under ``root`` in a stable order, and whether the walk met a symlink.

    The order is ``os.walk``'s top-down one with sorted names; a folder holding a
    ``SKILL.md`` (other than ``root``) holds skill files, not resources, and is skipped.
    """
    found: list[Path] = []
    fresh: dict[str, _Entry] = {}
    if cache is not None and cache.feed is not None:
        cache.feed.drain()  # what changed before this walk: everything it trusts is judged by it
    links = _walk(str(root), True, False, cache, fresh, found)
    if cache is not None:
        # Keep only what this walk saw, so removed folders do not pile up.
        cache.entries = fresh
    return found, links


def _walk(
    path: str, top: bool, placed: bool, cache: WalkCache | None, fresh: dict[str, _Entry], found: list[Path]
) -> bool:
    """Walk ``path``; ``placed`` says its parent's listing was reused, so the name still leads here."""
    listing, reused = _listing(path, placed, cache, fresh)
    if listing is None:
        return False
    if listing.skill and not top:
        return listing.links
    if listing.files:  # most folders of a large tree hold none: no Path for them
        base = Path(path)
        found.extend(base / name for name in listing.files)
    links = listing.links
    prefix = path if path.endswith(os.sep) else path + os.sep
    for name in listing.dirs:
        child = prefix + name
        if not (listing.links and os.path.islink(child)):
            links = _walk(child, False, reused, cache, fresh, found) or links
    return links


def _listing(
    path: str, placed: bool, cache: WalkCache | None, fresh: dict[str, _Entry]
) -> tuple[_Listing | None, bool]:
    """The listing of ``path`` and whether it was reused (its children keep their places)."""
    if cache is None:
        return _scan(path), False
    hit = cache.entries.get(path)
    feed = cache.feed
    # Trusted without a stat: the parent's entries did not move (so ``path`` is the same
    # folder) and this folder's watch saw no entry change since the listing was confirmed.
    if placed and hit is not None and hit.watch is not None and hit.watch.names_clean(hit.seq):
        fresh[path] = hit
        return hit.listing, True
    try:
        st = os.stat(path)
    except OSError:
        return None, False
    key = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    if hit is not None and hit.key == key:
        if feed is not None:
            # Confirmed now; the watch (added in an earlier pass) covers it from here on.
            hit.seq = feed.seq
            if hit.watch is None or not hit.watch.alive:
                hit.watch = feed.watch(path, seen=(st.st_mode, st.st_dev))
        fresh[path] = hit
        return hit.listing, True
    listing = _scan(path)
    if listing is None:
        return None, False
    if not listing.links and max(key[2], key[3]) + cache.racy_window_ns < time.time_ns():
        watch = feed.watch(path, seen=(st.st_mode, st.st_dev)) if feed is not None else None
        fresh[path] = _Entry(key, listing, feed.seq if feed is not None else 0, watch)
    return listing, False


def _scan(path: str) -> _Listing | None:
    dirs: list[str] = []
    files: list[str] = []
    skill = links = False
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                    links = links or entry.is_symlink()
                except OSError:
                    is_dir = False
                if is_dir:
                    if entry.name not in SKIPPED_DIRS and not entry.name.startswith("."):
                        dirs.append(entry.name)
                else:
                    if entry.name == "SKILL.md":
                        skill = True
                    if entry.name.endswith(YAML_SUFFIXES) and not entry.name.startswith("."):
                        files.append(entry.name)
    except OSError:
        return None  # as os.walk: an unreadable folder is skipped
    return _Listing(tuple(sorted(dirs)), tuple(sorted(files)), skill, links)
