"""A cgroup v2 per server process, where the cgroup hierarchy is writable.

A process can leave its process group and session (``setsid``) but not its cgroup, so a
cgroup holds a server's whole tree, daemonized helpers included; ``kill`` ends all of it
(``cgroup.kill``) even after the server and the supervisor that started it are gone.

Layout: under the supervisor's own cgroup, ``clawplane.<pid>.<start>/<label>.<n>`` per
spawned process (the supervisor's start time in the name: a later process that reuses its pid
never adopts a dead supervisor's folder and what still runs in it). To start a child *inside*
its cgroup (so nothing it forks before we could move it escapes), ``spawning_into`` moves the
supervisor itself into the new cgroup for the instant of the spawn and back right after it.
Where cgroup v2 is missing or not writable, ``available()`` is None and the caller falls back
to process groups, subreaper adoption and the environment mark (``marks``).
``CLAWPLANE_CGROUPS=off`` turns it off (to test that fallback).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import signal
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from clawplane._utils.identity import identify

__all__ = ["Cgroups", "available", "is_ours"]

_counter = itertools.count(1)
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _mount() -> Path | None:
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "cgroup2":
                    return Path(left.split()[4])
    except OSError:
        return None
    return None


def _own_path() -> str | None:
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        return None
    return None


class Cgroups:
    """This supervisor's cgroup folder and the per-process cgroups inside it."""

    def __init__(self, mount: Path, home: Path, root: Path) -> None:
        self.mount = mount
        self.home = home  # the cgroup this process runs in
        self.root = root  # clawplane.<pid>, holding one cgroup per spawned process

    def create(self, label: str) -> Path:
        """A new, empty cgroup for one process."""
        name = f"{_SAFE.sub('_', label)[:40] or 'proc'}.{next(_counter)}"
        path = self.root / name
        path.mkdir(mode=0o755)
        return path

    @contextlib.contextmanager
    def spawning_into(self, cgroup: Path) -> Iterator[None]:
        """Fork inside this block and the child starts in ``cgroup``.

        The supervisor itself sits in ``cgroup`` for the block (the few milliseconds of a
        spawn); only the spawn's own teardown ever kills that cgroup, and it cannot begin
        before the block ends. A spawn cancelled midway may leave a child nobody holds a
        handle to: the caller kills the cgroup then.
        """
        _write(cgroup / "cgroup.procs", str(os.getpid()))
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                _write(self.home / "cgroup.procs", str(os.getpid()))


@cache
def available() -> Cgroups | None:
    """This process's writable cgroup v2 setup, or None (decided once per process)."""
    if os.environ.get("CLAWPLANE_CGROUPS", "").lower() in ("0", "off", "no", "false"):
        return None
    mount, own = _mount(), _own_path()
    if mount is None or own is None:
        return None
    home = mount / own.lstrip("/")
    root = home / _root_name()
    try:
        root.mkdir(mode=0o755, exist_ok=True)
        probe = root / "probe"
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return None
    if not (home / "cgroup.procs").exists():
        return None
    atexit.register(_remove_root, root)
    return Cgroups(mount, home, root)


def _root_name() -> str:
    """This process's supervisor folder name: pid and start time name one process for ever."""
    me = identify(os.getpid())
    return f"clawplane.{os.getpid()}.{me.start if me is not None else 0}"


def _remove_root(root: Path) -> None:
    with contextlib.suppress(OSError):
        for child in root.iterdir():
            if child.is_dir():
                with contextlib.suppress(OSError):
                    child.rmdir()  # empty ones only: a live tree keeps its cgroup
        root.rmdir()


def is_ours(path: Path) -> bool:
    """True for a per-process cgroup a clawplane supervisor created (under any cgroup2 mount)."""
    mount = _mount()
    if mount is None:
        return False
    try:
        resolved = path.resolve()
        resolved.relative_to(mount)
    except (OSError, ValueError):
        return False
    return resolved.parent.name.startswith("clawplane.") and (resolved / "cgroup.procs").is_file()


def members(path: Path) -> list[int]:
    """The pids in ``path`` (empty once it is gone)."""
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def kill(path: Path) -> None:
    """SIGKILL everything in ``path`` (``cgroup.kill``, or one by one on kernels without it)."""
    try:
        _write(path / "cgroup.kill", "1")
        return
    except OSError:
        pass
    for pid in members(path):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def signal_members(path: Path, sig: int) -> None:
    """Send ``sig`` to everything in ``path`` (every member is ours: it is in our cgroup)."""
    for pid in members(path):
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def remove(path: Path) -> bool:
    """Remove an empty cgroup (and its supervisor folder when that is empty too); True if gone."""
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    with contextlib.suppress(OSError):
        if path.parent.name.startswith("clawplane.") and path.parent.name != _root_name():
            path.parent.rmdir()  # a dead supervisor's folder, now empty
    return True


def _write(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
