"""``clawplane run`` and ``clawplane down``: start and stop a folder's supervisor."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Annotated

import anyio
import typer

from clawplane.cli.common import FolderArg, OutDirOpt, StateDirOpt, fail, workspace
from clawplane.cli.console import out
from clawplane.reconcile.control import ControlError, request
from clawplane.reconcile.supervisorfile import SupervisorInfo, pid_alive, read_info, supervisor_alive
from clawplane.reconcile.workspace import Workspace
from clawplane.state import StateDB, StateError

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 60.0


def run(
    folder: FolderArg,
    detach: Annotated[
        bool, typer.Option("--detach", "-d", help="Run in the background (pidfile + socket).")
    ] = False,
    host: Annotated[str, typer.Option("--host", help="Loopback address for hosted servers.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port for hosted servers (0 = any free port).")] = 0,
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """Run the folder's supervisor: hosted MCP servers, their endpoint, and applies."""
    from clawplane.reconcile.daemon import SupervisorOptions, run_supervisor

    ws = workspace(folder, state_dir, out_dir)
    if detach:
        info = start_detached(ws, host=host, port=port)
        out.print(f"supervisor running (pid {info.pid}); endpoint {info.endpoint}", markup=False)
        out.print(f"stop it with: clawplane down {folder}", markup=False)
        return

    def ready(info: SupervisorInfo) -> None:
        out.print(
            f"supervisor ready (pid {info.pid}); hosted servers at {info.endpoint}/mcp/<name>", markup=False
        )
        out.print("apply changes with `clawplane apply`; stop with Ctrl-C or `clawplane down`", markup=False)

    try:
        anyio.run(partial(run_supervisor, ws, SupervisorOptions(host=host, port=port), on_ready=ready))
    except StateError as exc:
        fail(str(exc))


def start_detached(ws: Workspace, *, host: str = "127.0.0.1", port: int = 0) -> SupervisorInfo:
    """Start the supervisor in the background (unless it runs) and wait until it answers."""
    info = read_info(ws)
    if info is not None and supervisor_alive(ws):
        return info
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    args = [sys.executable, "-m", "clawplane", "run", str(ws.folder), "--state-dir", str(ws.state_dir),
            "--out-dir", str(ws.out_dir), "--host", host, "--port", str(port)]  # fmt: skip
    with open(ws.log_file, "ab") as log:
        proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail(f"the supervisor exited during start-up (code {proc.returncode}); see {ws.log_file}")
        info = read_info(ws)
        if info is not None and info.pid == proc.pid and _answers(Path(info.socket)):
            return info
        time.sleep(0.1)  # waiting on another process's start-up; there is no event to await
    fail(f"the supervisor did not answer within {START_TIMEOUT_S:.0f}s; see {ws.log_file}")
    raise AssertionError("unreachable")


def _answers(socket: Path) -> bool:
    async def ping() -> bool:
        async for event in request(socket, {"op": "ping"}, timeout=2):
            if event.get("final"):
                return bool(event.get("ok"))
        return False

    try:
        return anyio.run(ping)
    except ControlError:
        return False


def down(folder: FolderArg, state_dir: StateDirOpt = None, out_dir: OutDirOpt = None) -> None:
    """Stop the folder's supervisor and tear down every runtime it runs."""
    ws = workspace(folder, state_dir, out_dir)
    info = read_info(ws)
    if info is not None and pid_alive(info.pid):
        try:
            anyio.run(_shutdown, Path(info.socket))
        except ControlError:
            os.kill(info.pid, signal.SIGTERM)  # the socket is gone: fall back to the signal
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while pid_alive(info.pid) and time.monotonic() < deadline:
            time.sleep(0.1)  # waiting for another process to exit
        if pid_alive(info.pid):
            fail(f"the supervisor (pid {info.pid}) did not stop within {STOP_TIMEOUT_S:.0f}s")
        out.print(f"supervisor stopped (pid {info.pid})", markup=False)
    else:
        out.print("no supervisor is running for this folder", markup=False)
    if (ws.state_dir / "state.db").exists():
        from clawplane.reconcile.daemon import cleanup_stale_runtimes

        try:
            cleaned = cleanup_stale_runtimes(StateDB.open(ws.state_dir))
        except StateError as exc:
            fail(str(exc))
            return
        for name in cleaned:
            out.print(f"stopped leftover runtime {name}", markup=False)


async def _shutdown(socket: Path) -> None:
    async for _ in request(socket, {"op": "shutdown"}):
        pass
