"""``clawplane run`` and ``clawplane down``: start and stop a folder's supervisor."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
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
    watch: Annotated[
        bool,
        typer.Option(
            "--watch/--no-watch",
            help="Converge on start, on every change of the folder and every resync (the GitOps loop); "
            "--no-watch only carries out `clawplane apply`.",
        ),
    ] = True,
    resync_interval: Annotated[
        float, typer.Option("--resync-interval", min=0.1, help="Seconds between level-based resyncs.")
    ] = 30.0,
    metrics_port: Annotated[
        int, typer.Option("--metrics-port", help="Port of /healthz, /readyz, /metrics (0 = any free port).")
    ] = 0,
    no_metrics: Annotated[
        bool, typer.Option("--no-metrics", help="Serve no health or metrics endpoint.")
    ] = False,
    log_format: Annotated[str, typer.Option("--log-format", help="Log lines as `text` or `json`.")] = "text",
) -> None:
    """Run the folder's supervisor: hosted MCP servers, their endpoint, and the GitOps loop."""
    from clawplane.reconcile.daemon import SupervisorOptions, run_supervisor
    from clawplane.reconcile.logs import LOG_FORMATS, configure_logging

    if log_format not in LOG_FORMATS:
        fail(f"--log-format must be one of {', '.join(LOG_FORMATS)}")
    ws = workspace(folder, state_dir, out_dir)
    loop = LoopArgs(watch, resync_interval, None if no_metrics else metrics_port, log_format)
    if detach:
        info = start_detached(ws, host=host, port=port, loop=loop)
        out.print(f"supervisor running (pid {info.pid}); endpoint {info.endpoint}", markup=False)
        if info.metrics:
            out.print(f"health and metrics at {info.metrics}/metrics", markup=False)
        out.print(f"stop it with: clawplane down {folder}", markup=False)
        return

    def ready(info: SupervisorInfo) -> None:
        out.print(
            f"supervisor ready (pid {info.pid}); hosted servers at {info.endpoint}/mcp/<name>", markup=False
        )
        if info.metrics:
            out.print(f"health and metrics at {info.metrics}/metrics", markup=False)
        if watch:
            out.print("watching the folder; stop with Ctrl-C or `clawplane down`", markup=False)
        else:
            out.print(
                "apply changes with `clawplane apply`; stop with Ctrl-C or `clawplane down`", markup=False
            )

    configure_logging(log_format)
    options = SupervisorOptions(
        host=host,
        port=port,
        watch=watch,
        resync_interval=resync_interval,
        metrics_port=loop.metrics_port,
    )
    try:
        anyio.run(partial(run_supervisor, ws, options, on_ready=ready))
    except StateError as exc:
        fail(str(exc))


@dataclass(frozen=True)
class LoopArgs:
    """How a detached supervisor runs its loop (the default: only carry out applies)."""

    watch: bool = False
    resync_interval: float = 30.0
    metrics_port: int | None = 0
    log_format: str = "text"

    def argv(self) -> list[str]:
        """The matching ``clawplane run`` options."""
        args = ["--watch" if self.watch else "--no-watch", "--resync-interval", str(self.resync_interval)]
        args += ["--no-metrics"] if self.metrics_port is None else ["--metrics-port", str(self.metrics_port)]
        return [*args, "--log-format", self.log_format]


def start_detached(
    ws: Workspace, *, host: str = "127.0.0.1", port: int = 0, loop: LoopArgs | None = None
) -> SupervisorInfo:
    """Start the supervisor in the background (unless it runs) and wait until it answers."""
    info = read_info(ws)
    if info is not None and supervisor_alive(ws):
        return info
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    args = [sys.executable, "-m", "clawplane", "run", str(ws.folder), "--state-dir", str(ws.state_dir),
            "--out-dir", str(ws.out_dir), "--host", host, "--port", str(port),
            *(loop or LoopArgs()).argv()]  # fmt: skip
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
