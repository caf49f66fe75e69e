"""Which reads of a root scan a change feed vouches for, so a rescan ``stat``-s only the rest.

A read below the scan's root is covered when every folder from the root down to it is
watched (a watch refuses a symlink, so each of those is a real folder whose entries an
event would report) and an event in a watched folder would show its change:

- a folder's own ``stat``, or a missing name: an entry event in that folder or its parent;
- a symlink's ``lstat``: only replacing the link changes it, an entry event in its folder;
- a regular file: its own watch reports content and attribute changes made through any
  of its links (its folder's watch sees only those made through that folder);
- a real path: the root's real path (checked each time) joined with the watched folders.

A root that does not exist is covered by its nearest existing folder: nothing below it
can appear without an entry event there, and that folder's identity is checked each
time (a ``"folder"`` read: device and inode of a real folder).
"""

from __future__ import annotations

import os
import stat as stat_mod
from dataclasses import dataclass
from typing import Any

from clawplane._utils.changefeed import ChangeFeed, Watch

__all__ = ["Cover", "Dep", "StatKey", "cover_reads", "stat_key"]

StatKey = tuple[int, int, int, int, int, int, int]
Dep = tuple[str, str, Any]
"""One recorded read: ``(kind, path, observed)``."""


def stat_key(st: os.stat_result) -> StatKey:
    """The identity of a path's state: a change in content, links or type changes it."""
    return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)


@dataclass(slots=True)
class Cover:
    """The watches that vouch for a root's reads, and the reads left to ``stat``."""

    names: list[Watch]
    """Folders whose entries must not come, go or move."""
    contents: list[Watch]
    """Files whose content and attributes must not change."""
    checks: list[Dep]
    seq: int
    """The feed's pass in which every read was last confirmed."""

    def quiet(self) -> bool:
        """No watch saw a relevant event after pass ``seq``, and all are still in place."""
        seq = self.seq
        return all(w.alive and w.names <= seq for w in self.names) and all(
            w.alive and w.any <= seq for w in self.contents
        )

    @property
    def intact(self) -> bool:
        """Every watch is still in place (the kernel drops one whose folder went away)."""
        return all(w.alive for w in self.names) and all(w.alive for w in self.contents)


class _Builder:
    """Watches folders as reads need them; remembers which ones and how."""

    def __init__(self, feed: ChangeFeed, anchor: str) -> None:
        self.feed = feed
        self.anchor = anchor
        self.placed: dict[str, Watch | None] = {}
        self.names: dict[int, Watch] = {}
        self.contents: dict[int, Watch] = {}

    def chain(self, folder: str) -> Watch | None:
        """The watch on ``folder`` if it and every folder up to the anchor are watched."""
        if folder in self.placed:
            return self.placed[folder]
        found: Watch | None = None
        if folder == self.anchor or self.chain(folder.rpartition("/")[0]) is not None:
            found = self.feed.watch(folder)
            if found is not None:
                self.names[found.wd] = found  # its entries lead to everything below it
        self.placed[folder] = found
        return found

    def file(self, path: str, observed: tuple[int, ...]) -> bool:
        """Watch the regular file ``path`` itself (as ``observed`` by ``lstat``), below a watched chain."""
        if self.chain(path.rpartition("/")[0]) is None:
            return False
        watch = self.feed.watch(path, folder=False, seen=(observed[0], observed[1]))
        if watch is not None:
            self.contents[watch.wd] = watch
        return watch is not None

    def build(self, checks: list[Dep]) -> Cover:
        return Cover(list(self.names.values()), list(self.contents.values()), checks, self.feed.seq)


def cover_reads(deps: list[Dep], anchor: str, feed: ChangeFeed) -> Cover | None:
    """Split ``deps`` into reads watched folders vouch for and reads to ``stat``; watch the folders."""
    if not os.path.isabs(anchor) or os.path.normpath(anchor) != anchor or anchor == "/":
        return None
    if ("lstat", anchor, None) in deps:
        return _cover_missing(deps, anchor, feed)
    prefix = anchor + "/"
    builder = _Builder(feed, anchor)
    anchor_real = next(
        (obs for kind, path, obs in deps if kind == "realpath" and path == anchor and isinstance(obs, str)),
        None,
    )
    checks: list[Dep] = []
    for dep in deps:
        kind, path, observed = dep
        if not (path.startswith(prefix) and _covered(builder, kind, path, observed, anchor_real)):
            checks.append(dep)
    return builder.build(checks)


def _covered(builder: _Builder, kind: str, path: str, observed: Any, anchor_real: str | None) -> bool:
    parent = path.rpartition("/")[0]
    if observed is None:
        # ``stat`` may also miss through a dangling symlink, which can start resolving silently.
        return kind in ("lstat", "realpath") and builder.chain(parent) is not None
    if kind == "realpath":
        return (
            anchor_real is not None
            and observed == anchor_real + path[len(builder.anchor) :]
            and builder.chain(path) is not None
        )
    if observed.__class__ is not tuple:
        return False  # an error: checked again each time
    mode = observed[0]
    if stat_mod.S_ISDIR(mode):
        return builder.chain(path) is not None
    if kind != "lstat":
        return False  # ``stat`` of a non-folder may go through a symlink
    if stat_mod.S_ISLNK(mode):
        return builder.chain(parent) is not None
    return stat_mod.S_ISREG(mode) and builder.file(path, observed)


def _cover_missing(deps: list[Dep], anchor: str, feed: ChangeFeed) -> Cover | None:
    """A root that does not exist: its nearest existing folder's entries keep it missing."""
    found = _existing_folder(anchor)
    if found is None:
        return None
    folder, st = found
    watch = feed.watch(folder)
    if watch is None:
        return None
    prefix = anchor + "/"
    checks = [
        dep
        for dep in deps
        if not (
            dep[2] is None
            and dep[0] in ("lstat", "realpath")
            and (dep[1] == anchor or dep[1].startswith(prefix))
        )
    ]
    # Its identity, not its mtime: entries coming and going are the watch's to report.
    checks.append(("folder", folder, (st.st_dev, st.st_ino)))
    return Cover([watch], [], checks, feed.seq)


def _existing_folder(path: str) -> tuple[str, os.stat_result] | None:
    """The nearest ancestor that is a real folder, passing only missing names and plain files."""
    while True:
        parent = path.rpartition("/")[0] or "/"
        if parent == path:
            return None
        try:
            st = os.lstat(parent)
        except FileNotFoundError:
            path = parent
            continue
        except OSError:
            return None
        if stat_mod.S_ISDIR(st.st_mode):
            return parent, st
        if stat_mod.S_ISLNK(st.st_mode):
            return None  # what it points to can gain the path without an event here
        path = parent
