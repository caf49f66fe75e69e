"""The supervisor's pidfile: who runs a folder's supervisor, and is it alive.

The pidfile names the supervisor by identity (pid, start time, boot), so a pid that now
belongs to another process is never taken for it. A pidfile that another user owns, or that
others may write, is ignored: nothing read from it is trusted, let alone signalled.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawplane._utils.atomicfile import atomic_write_bytes
from clawplane._utils.identity import ProcessIdentity, alive, identify
from clawplane.reconcile.workspace import Workspace


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
    try:
        info = os.lstat(ws.pidfile)
        foreign = info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o022
        if foreign or not stat.S_ISREG(info.st_mode):
            return None
        doc = json.loads(ws.pidfile.read_text(encoding="utf-8"))
        return SupervisorInfo(
            int(doc["pid"]),
            str(doc["socket"]),
            str(doc["endpoint"]),
            str(doc["started_at"]),
            str(doc.get("metrics", "")),
            int(doc.get("start", -1)),
            str(doc.get("boot", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_info(ws: Workspace, info: SupervisorInfo) -> None:
    """Write the pidfile atomically (0600)."""
    atomic_write_bytes(ws.pidfile, json.dumps(_as_dict(info)).encode("utf-8"))


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
    """True when the folder's supervisor process is running (that very process, and its socket is ours)."""
    info = read_info(ws)
    if info is None or not info.running():
        return False
    try:
        return os.lstat(info.socket).st_uid == os.geteuid()
    except OSError:
        return False


LOOP_STATUS_FILE = "loop.json"


def ping(ws: Workspace, *, timeout: float = 2.0) -> dict[str, Any] | None:
    """The running supervisor's own answer (live loop state, degraded writes), or None."""
    import anyio

    from clawplane.reconcile.control import ControlError, request

    info = read_info(ws)
    if info is None or not info.running():
        return None

    async def ask() -> dict[str, Any] | None:
        with anyio.fail_after(timeout):
            async for event in request(Path(info.socket), {"op": "ping"}, timeout=timeout):
                if event.get("final"):
                    return event if event.get("ok") else None
        return None

    try:
        return anyio.run(ask)
    except (ControlError, TimeoutError, OSError):
        return None


def read_loop_status(ws: Workspace) -> dict[str, Any] | None:
    """The loop status a running (or the last) supervisor wrote, or None."""
    try:
        doc = json.loads((ws.state_dir / LOOP_STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
