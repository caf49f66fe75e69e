"""The supervisor's pidfile: who runs a folder's supervisor, and is it alive.

The pidfile names the supervisor by identity (pid, start time, boot), so a pid that now
belongs to another process is never taken for it. A pidfile that another user owns, that
others may write, that is a link, or that lies in a state directory another user could
aim, is ignored: nothing read from it is trusted, let alone signalled. Both files are read
and written through the state directory's descriptor (``open_state_dir``), never a path.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawplane._utils.identity import ProcessIdentity, alive, identify
from clawplane._utils.safedir import UnsafePathError, open_dir
from clawplane.state import StateError, open_state_dir
from clawplane.workspace.layout import Workspace


@dataclass(frozen=True, slots=True)
class SupervisorInfo:
    """What a running supervisor wrote about itself."""

    pid: int
    socket: str
    endpoint: str
    started_at: str
    metrics: str = ""
    """Base URL of ``/healthz``, ``/readyz`` and ``/metrics`` (empty when disabled)."""
    start: int = -1
    """The supervisor's start time (clock ticks since boot), with ``boot`` its identity."""
    boot: str = ""

    @property
    def identity(self) -> ProcessIdentity:
        """The supervisor process, for sure."""
        return ProcessIdentity(self.pid, self.start, self.boot)

    def running(self) -> bool:
        """True while the process that wrote this pidfile runs (not merely its pid)."""
        return alive(self.identity)

    @classmethod
    def for_this_process(
        cls, socket: str, endpoint: str, started_at: str, metrics: str = ""
    ) -> SupervisorInfo:
        """The pidfile content for the calling process."""
        me = identify(os.getpid())
        assert me is not None
        return cls(me.pid, socket, endpoint, started_at, metrics, me.start, me.boot)


def read_info(ws: Workspace) -> SupervisorInfo | None:
    """The pidfile's content, or None when there is none, it is unreadable, or it is not trusted."""
    text = _read_own(ws, ws.pidfile.name)
    if text is None:
        return None
    try:
        doc = json.loads(text)
        return SupervisorInfo(
            int(doc["pid"]),
            _socket_here(ws, str(doc["socket"])),
            str(doc["endpoint"]),
            str(doc["started_at"]),
            str(doc.get("metrics", "")),
            int(doc.get("start", -1)),
            str(doc.get("boot", "")),
        )
    except (ValueError, KeyError, TypeError):
        return None


def _socket_here(ws: Workspace, recorded: str) -> str:
    """The control socket where it is now: a folder moved while its supervisor ran took the socket
    in its state directory along (the pidfile still names the old path)."""
    path, here = Path(recorded), ws.state_dir / SOCKET_NAME
    if path.name != SOCKET_NAME or path.parent == ws.state_dir:
        return recorded
    try:
        moved = stat.S_ISSOCK(os.lstat(here).st_mode)
    except OSError:
        moved = False
    return str(here) if moved else recorded  # ``control.request`` reaches it however long its path


def _read_own(ws: Workspace, name: str) -> bytes | None:
    """The file ``name`` in the state directory if it is this user's and nobody else may write it."""
    try:
        with open_state_dir(ws.state_dir, create=False) as folder:
            fd = folder.open_file(name, os.O_RDONLY)
            with os.fdopen(fd, "rb") as fh:
                if stat.S_IMODE(os.fstat(fh.fileno()).st_mode) & 0o022:
                    return None
                return fh.read()
    except (StateError, OSError):
        return None


def write_info(ws: Workspace, info: SupervisorInfo) -> None:
    """Write the pidfile atomically (0600) through the state directory's descriptor.

    Raises:
        StateError: Another user could aim writes in the state directory.
        OSError: The disk refused it.
    """
    with open_state_dir(ws.state_dir) as folder:
        try:
            folder.write_atomic(ws.pidfile.name, json.dumps(_as_dict(info)).encode("utf-8"))
        except UnsafePathError as exc:
            raise StateError(str(exc)) from None


def remove_info(ws: Workspace) -> None:
    """Remove the pidfile (a link is removed, never followed); nothing to do when it is gone."""
    try:
        with open_state_dir(ws.state_dir, create=False) as folder:
            folder.unlink(ws.pidfile.name)
    except (StateError, OSError):
        return


def _as_dict(info: SupervisorInfo) -> dict[str, object]:
    return {
        "pid": info.pid,
        "socket": info.socket,
        "endpoint": info.endpoint,
        "started_at": info.started_at,
        "metrics": info.metrics,
        "start": info.start,
        "boot": info.boot,
    }


def pid_alive(pid: int) -> bool:
    """True if a process with ``pid`` exists (and is not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def supervisor_alive(ws: Workspace) -> bool:
    """True when the folder's supervisor process is running: that very process, holding this folder's lock.

    Identity is the pidfile's process (pid, start time, boot) and the lock it holds on this
    state directory's ``supervisor.lock``, not a path: a folder moved (``mv``) while its
    supervisor runs is still run by it. Where the kernel's lock table cannot be read, the
    control socket the pidfile names must be this user's.
    """
    info = read_info(ws)
    if info is None or not info.running():
        return False
    holder = lock_holders(ws.state_dir / SUPERVISOR_LOCK)
    if holder is not None:
        return info.pid in holder
    try:
        return os.lstat(info.socket).st_uid == os.geteuid()
    except OSError:
        return False


SUPERVISOR_LOCK = "supervisor.lock"
SOCKET_NAME = "control.sock"


def lock_holders(path: Path) -> set[int] | None:
    """The pids holding a ``flock`` on ``path`` (``/proc/locks``); None when that cannot be read."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return set()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return set()
    try:
        with open("/proc/locks", encoding="ascii") as fh:
            table = fh.read()
    except OSError:
        return None
    wanted = (os.major(info.st_dev), os.minor(info.st_dev), info.st_ino)
    holders: set[int] = set()
    # "1: FLOCK  ADVISORY  WRITE 4242 fe:00:10019608 0 EOF" (major and minor in hex).
    for line in table.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK":  # waiters read "N: -> FLOCK ..."
            continue
        try:
            major, minor, inode = fields[5].split(":")
            where = (int(major, 16), int(minor, 16), int(inode))
            pid = int(fields[4])
        except ValueError:
            continue
        if where == wanted:
            holders.add(pid)
    return holders


LOOP_STATUS_FILE = "loop.json"


def read_loop_status(ws: Workspace) -> dict[str, Any] | None:
    """The loop status a running (or the last) supervisor wrote, or None."""
    text = _read_own(ws, LOOP_STATUS_FILE)
    try:
        doc = json.loads(text) if text is not None else None
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def write_loop_status(ws: Workspace, data: bytes) -> None:
    """Write ``loop.json`` atomically (0600) through the state directory's descriptor.

    Raises:
        OSError: The disk refused it, or it is a link or lies where another user could aim it
            (``UnsafePathError``, whose message says so).
    """
    with open_dir(ws.state_dir, option="--state-dir DIR") as folder:
        folder.write_atomic(LOOP_STATUS_FILE, data)
