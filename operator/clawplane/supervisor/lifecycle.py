"""A folder's background supervisor: start it detached and wait until it answers, stop it.

Used by ``clawplane run --detach``, ``apply`` (which starts one when none runs) and ``down``.
Nothing here prints: what goes wrong is a ``SupervisorStartError`` whose message says why and
ends with the supervisor's last log lines.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import anyio

from clawplane._utils.identity import send_signal
from clawplane.state import StateError, open_state_dir
from clawplane.workspace import (
    ControlError,
    SupervisorClient,
    SupervisorInfo,
    Workspace,
    ping,
    read_info,
    supervisor_alive,
)

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 60.0


class SupervisorStartError(Exception):
    """The supervisor could not be started, or did not answer in time (the message says why)."""


@dataclass(frozen=True)
class LoopArgs:
    """How a detached supervisor runs its loop (the default: only carry out applies)."""

    watch: bool = False
    resync_interval: float = 30.0
    metrics_port: int | None = 0
    log_format: str = "text"
    log_level: str = "info"
    ping_interval: float = 15.0

    def argv(self) -> list[str]:
        """The matching ``clawplane run`` options."""
        args = ["--watch" if self.watch else "--no-watch", "--resync-interval", str(self.resync_interval)]
        args += ["--no-metrics"] if self.metrics_port is None else ["--metrics-port", str(self.metrics_port)]
        args += ["--log-format", self.log_format, "--log-level", self.log_level]
        return [*args, "--ping-interval", str(self.ping_interval)]


def start_detached(
    ws: Workspace, *, host: str | None = None, port: int = 0, loop: LoopArgs | None = None
) -> tuple[SupervisorInfo, bool]:
    """The folder's running supervisor, started in the background first if none runs.

    Returns its pidfile and whether this call started it (so the caller can stop it again).

    Raises:
        SupervisorStartError: It exited during start-up, never answered, or its log cannot be
            opened safely.
    """
    info = read_info(ws)
    if info is not None and supervisor_alive(ws):
        return info, False
    args = [sys.executable, "-m", "clawplane", "run", str(ws.folder), "--state-dir", str(ws.state_dir),
            "--out-dir", str(ws.out_dir), *(["--host", host] if host else []), "--port", str(port),
            *(loop or LoopArgs()).argv()]  # fmt: skip
    with os.fdopen(_open_log(ws, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab") as log:
        logged = log.seek(0, os.SEEK_END)
        proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SupervisorStartError(
                f"the supervisor exited during start-up (code {proc.returncode})" + _log_tail(ws, logged)
            )
        info = read_info(ws)
        if info is not None and info.pid == proc.pid and ping(ws) is not None:
            return info, True
        time.sleep(0.1)  # waiting on another process's start-up; there is no event to await
    proc.terminate()  # it never answered: nothing may keep running that nobody can reach
    raise SupervisorStartError(
        f"the supervisor did not answer within {START_TIMEOUT_S:.0f}s" + _log_tail(ws, logged)
    )


def _open_log(ws: Workspace, flags: int) -> int:
    """The supervisor's log, opened through the state directory's descriptor, never through a link.

    Raises:
        SupervisorStartError: Another user could aim it (a link, someone else's file or folder),
            or the disk refused it; the message says which.
    """
    try:
        with open_state_dir(ws.state_dir) as folder:
            return folder.open_file(ws.log_file.name, flags)
    except StateError as exc:
        raise SupervisorStartError(str(exc)) from None
    except OSError as exc:
        problem = exc.strerror or exc
        raise SupervisorStartError(f"cannot open the supervisor's log {ws.log_file}: {problem}") from None


def _log_tail(ws: Workspace, offset: int, lines: int = 10) -> str:
    """What the supervisor logged since ``offset``, for an error message."""
    try:
        with (
            open_state_dir(ws.state_dir, create=False) as folder,
            os.fdopen(folder.open_file(ws.log_file.name, os.O_RDONLY), "rb") as log,
        ):
            log.seek(offset)
            text = log.read().decode("utf-8", "replace")
    except (OSError, StateError):
        return f"; see {ws.log_file}"
    tail = [line for line in text.splitlines() if line.strip()][-lines:]
    shown = "".join(f"\n  {line}" for line in tail)
    return f"; its last log lines ({ws.log_file}):{shown}" if tail else f"; see {ws.log_file}"


def stop_supervisor(info: SupervisorInfo) -> bool:
    """Ask ``info``'s supervisor to shut down (SIGTERM if its socket is gone); True once it exited."""
    try:
        anyio.run(_shutdown, Path(info.socket))
    except ControlError:
        # The socket is gone: fall back to the signal, sent only to that very process.
        send_signal(info.identity, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while info.running() and time.monotonic() < deadline:
        time.sleep(0.1)  # waiting for another process to exit
    return not info.running()


async def _shutdown(socket: Path) -> None:
    await SupervisorClient(socket).shutdown()
