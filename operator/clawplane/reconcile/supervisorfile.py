"""The supervisor's pidfile: who runs a folder's supervisor, and is it alive."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def read_info(ws: Workspace) -> SupervisorInfo | None:
    """The pidfile's content, or None when there is none or it is unreadable."""
    try:
        doc = json.loads(ws.pidfile.read_text(encoding="utf-8"))
        return SupervisorInfo(
            int(doc["pid"]),
            str(doc["socket"]),
            str(doc["endpoint"]),
            str(doc["started_at"]),
            str(doc.get("metrics", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_info(ws: Workspace, info: SupervisorInfo) -> None:
    """Write the pidfile atomically."""
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    tmp = ws.pidfile.with_suffix(".tmp")
    tmp.write_text(json.dumps(_as_dict(info)), encoding="utf-8")
    tmp.replace(ws.pidfile)


def _as_dict(info: SupervisorInfo) -> dict[str, object]:
    return {
        "pid": info.pid,
        "socket": info.socket,
        "endpoint": info.endpoint,
        "started_at": info.started_at,
        "metrics": info.metrics,
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
    """True when the folder's supervisor process is running."""
    info = read_info(ws)
    return info is not None and pid_alive(info.pid) and Path(info.socket).exists()


LOOP_STATUS_FILE = "loop.json"


def read_loop_status(ws: Workspace) -> dict[str, Any] | None:
    """The loop status a running (or the last) supervisor wrote, or None."""
    try:
        doc = json.loads((ws.state_dir / LOOP_STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
