"""``clawplane run`` and ``clawplane down``: start and stop a folder's supervisor."""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Annotated

import anyio
import typer

from clawplane.cli.common import (
    FolderArg,
    LogLevelOpt,
    OutDirOpt,
    StateDirOpt,
    fail,
    open_state,
    parse_log_level,
    workspace,
)
from clawplane.cli.console import EXIT_USAGE, out
from clawplane.state import FolderLock, StateError
from clawplane.supervisor import (
    STOP_TIMEOUT_S,
    LoopArgs,
    SupervisorStartError,
    start_detached,
    stop_supervisor,
)
from clawplane.workspace import SupervisorInfo, Workspace, ping, read_info, remove_info, supervisor_alive


def run(
    folder: FolderArg,
    detach: Annotated[
        bool, typer.Option("--detach", "-d", help="Run in the background (pidfile + socket).")
    ] = False,
    host: Annotated[
        str | None,
        typer.Option("--host", help="Address for hosted servers (default: the Gateway's, else 127.0.0.1)."),
    ] = None,
    port: Annotated[
        int,
        typer.Option("--port", help="Port for hosted servers (0: the Gateway's, else the last, else free)."),
    ] = 0,
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
    log_level: LogLevelOpt = "info",
    ping_interval: Annotated[
        float,
        typer.Option(
            "--ping-interval",
            min=0,
            help="Seconds between liveness checks of ready servers (MCP ping; a stopped process is "
            "restarted); 0 turns them off.",
        ),
    ] = 15.0,
) -> None:
    """Run the folder's supervisor: hosted MCP servers, their endpoint, and the GitOps loop."""
    from clawplane.mcpserve.endpoint import control_endpoint
    from clawplane.reconcile.logs import LOG_FORMATS, configure_logging
    from clawplane.runtimes import RuntimeSettings
    from clawplane.supervisor import SupervisorOptions, run_supervisor
    from clawplane.ui import dashboard

    if log_format not in LOG_FORMATS:
        fail(f"--log-format must be one of {', '.join(LOG_FORMATS)}", EXIT_USAGE)
    level = parse_log_level(log_level)
    ws = workspace(folder, state_dir, out_dir)
    loop = LoopArgs(
        watch, resync_interval, None if no_metrics else metrics_port, log_format, log_level, ping_interval
    )
    running = _already_running(ws, folder, watch=watch, detach=detach)
    if detach:
        try:
            info = running or start_detached(ws, host=host, port=port, loop=loop)[0]
        except SupervisorStartError as exc:
            fail(str(exc))
            return
        state = "already running" if running else "running"
        mode = "watching the folder" if watch else "carrying out `clawplane apply` only"
        out.print(f"supervisor {state} (pid {info.pid}, {mode}); endpoint {info.endpoint}", markup=False)
        if info.metrics:
            out.print(f"health and metrics at {info.metrics}/metrics", markup=False)
        out.print(f"stop it with: clawplane down {folder}", markup=False)
        return

    def ready(info: SupervisorInfo) -> None:
        lines = [f"supervisor ready (pid {info.pid}); hosted servers at {info.endpoint}/mcp/<name>"]
        if info.metrics:
            lines.append(f"health and metrics at {info.metrics}/metrics")
        if watch:
            lines.append("watching the folder; stop with Ctrl-C or `clawplane down`")
        else:
            lines.append("apply changes with `clawplane apply`; stop with Ctrl-C or `clawplane down`")
        for line in lines:
            if log_format == "json":  # every line a JSON object, as the format promises
                logging.getLogger("clawplane.cli").info("%s", line)
            else:
                out.print(line, markup=False)

    configure_logging(log_format, level=level)
    options = SupervisorOptions(
        host=host,
        port=port,
        settings=RuntimeSettings(ping_interval=ping_interval or None),
        watch=watch,
        resync_interval=resync_interval,
        metrics_port=loop.metrics_port,
        pages=dashboard,
        services=(control_endpoint,),  # the control plane at /mcp/_clawplane
    )
    try:
        anyio.run(partial(run_supervisor, ws, options, on_ready=ready))
    except StateError as exc:
        fail(str(exc))


def _already_running(ws: Workspace, folder: Path, *, watch: bool, detach: bool) -> SupervisorInfo | None:
    """Deal with a supervisor that already runs the folder before starting one.

    Returns it when it already runs as asked (detached, watching or not as asked). One that
    ``clawplane apply`` started (not watching) is replaced: `run` takes over. One that
    watches is left alone, with how to replace it.
    """
    info = read_info(ws)
    if info is None or not supervisor_alive(ws):
        return None
    reply = ping(ws)
    if reply is None:
        fail(f"a supervisor (pid {info.pid}) holds this folder but does not answer on {info.socket}; "
             f"stop it with `clawplane down {folder}`, then run again")  # fmt: skip
        raise AssertionError("unreachable")
    watching = bool(reply.get("watching"))
    if detach and watching == watch:
        return info
    if watching:
        fail(f"a supervisor already watches this folder (pid {info.pid}); leave it running, or stop it "
             f"with `clawplane down {folder}` and run again")  # fmt: skip
    out.print(f"taking over from the supervisor `clawplane apply` started (pid {info.pid}, not watching "
              "the folder); its servers restart under the new one", markup=False)  # fmt: skip
    if not stop_supervisor(info):
        fail(f"the supervisor (pid {info.pid}) did not stop within {STOP_TIMEOUT_S:.0f}s; "
             f"try `clawplane down {folder}`")  # fmt: skip
    return None


def down(folder: FolderArg, state_dir: StateDirOpt = None, out_dir: OutDirOpt = None) -> None:
    """Stop the folder's supervisor and tear down every runtime it runs."""
    ws = workspace(folder, state_dir, out_dir)
    info = read_info(ws)  # None unless this user's own, private pidfile names it
    if info is not None and info.running():
        if not stop_supervisor(info):
            fail(f"the supervisor (pid {info.pid}) did not stop within {STOP_TIMEOUT_S:.0f}s")
        out.print(f"supervisor stopped (pid {info.pid})", markup=False)
    else:
        out.print("no supervisor is running for this folder", markup=False)
        if info is not None:  # the pidfile of one that died without cleaning up
            remove_info(ws)
    if (ws.state_dir / "state.db").exists():
        from clawplane.supervisor import cleanup_stale_runtimes

        try:
            # Holding the supervisor's lock proves no supervisor owns what is recorded.
            with FolderLock(ws.state_dir, "supervisor.lock"):
                cleaned = cleanup_stale_runtimes(open_state(ws))
        except StateError as exc:
            fail(str(exc))
            return
        for name in cleaned:
            out.print(f"stopped leftover runtime {name}", markup=False)
