"""Who besides us can change a directory, and what to tell the user when someone can.

A directory that clawplane writes into must be changeable only by the user clawplane runs
as (or root): anyone else who can write it can plant a link in it, and anyone who can write
one of its parents can rename it away and put their own in its place, aiming our writes.
A group counts as "others" unless no other user is in it (a user private group). The
operator's own volume (``clawplane k8s run --state-dir``) is trusted as the deployment made
it: a pod's ``emptyDir`` is mode 0777 and shared only by the pod's own containers.
"""

from __future__ import annotations

import functools
import grp
import os
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Problem", "child_swap_problem", "own_dir_problem", "owner_name", "trust_tree", "trusted"]

_TRUSTED: set[Path] = set()


@dataclass(frozen=True, slots=True)
class Problem:
    """What lets another user change a directory (``is writable by every user``) and the fix."""

    what: str
    fix: str


def trust_tree(path: Path) -> None:
    """Take ``path`` and its parents as they are (the operator's volume): only what is below is checked."""
    _TRUSTED.add(Path(os.path.realpath(path)))


def trusted(path: Path) -> bool:
    """True when ``path`` is a trusted tree's root or one of its parents."""
    return any(path == root or path in root.parents for root in _TRUSTED)


def owner_name(uid: int) -> str:
    """``uid 1001 (alice)``, or ``uid 1001`` when the system does not know the name."""
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _ours(uid: int) -> bool:
    return uid in (os.geteuid(), 0)


@functools.lru_cache(maxsize=64)
def _group_is_ours_alone(gid: int, uid: int) -> bool:
    """True when no user other than ``uid`` (and root) is in group ``gid``."""
    try:
        me = pwd.getpwuid(uid).pw_name
        members = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        return False  # an unknown group: nobody can say who is in it
    if members - {me, "root"}:
        return False
    return all(entry.pw_uid in (uid, 0) for entry in pwd.getpwall() if entry.pw_gid == gid)


def _writers(info: os.stat_result) -> str | None:
    """Who else may write a directory with ``info``: "others", "group NAME", or None."""
    mode = stat.S_IMODE(info.st_mode)
    if mode & stat.S_IWOTH:
        return "every user"
    if mode & stat.S_IWGRP and not _group_is_ours_alone(info.st_gid, os.geteuid()):
        try:
            name = grp.getgrgid(info.st_gid).gr_name
        except KeyError:
            name = str(info.st_gid)
        return f"group {name}"
    return None


def own_dir_problem(path: Path, info: os.stat_result) -> Problem | None:
    """Why the directory ``path`` (with ``info``) is not ours alone to write into, or None."""
    problems = []
    if not _ours(info.st_uid):
        problems.append(f"is owned by {owner_name(info.st_uid)}")
    writers = _writers(info)
    if writers is not None:
        problems.append(f"is writable by {writers}" if not problems else f"writable by {writers}")
    if not problems:
        return None
    if _ours(info.st_uid):
        fix = f"check what is in it, then `chmod go-w {path}`, or remove it"
    else:
        fix = "remove it"
    return Problem(" and ".join(problems), fix)


def child_swap_problem(parent: Path, info: os.stat_result, child: os.stat_result | None) -> Problem | None:
    """Why another user could rename an entry of ``parent`` away and put their own there, or None.

    ``child`` is the entry's own status (None before it exists): in a sticky directory only
    its owner (and root) may rename it.
    """
    if not _ours(info.st_uid):
        owner = owner_name(info.st_uid)
        return Problem(f"is owned by {owner}", "use a folder that only you (or root) can change")
    writers = _writers(info)
    if writers is None:
        return None
    sticky = info.st_mode & stat.S_ISVTX
    if sticky and (child is None or _ours(child.st_uid)):
        return None
    what = f"is writable by {writers}" + ("" if sticky else " and has no sticky bit")
    who = "o-w" if writers == "every user" else "g-w"
    return Problem(what, f"`chmod {who} {parent}`" + ("" if sticky else f" (or `chmod +t {parent}`)"))
