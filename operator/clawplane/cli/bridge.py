"""``clawplane bridge -- COMMAND ARGS…``: serve one stdio MCP server over streamable HTTP.

The container entrypoint of the Kubernetes driver. The server's MCP endpoint is ``/mcp``,
its health ``/healthz``. Clients must send ``Authorization: Bearer <token>`` with the
token from ``--token-file`` (or ``CLAWPLANE_BRIDGE_TOKEN``); without one the bridge refuses
to start unless ``--allow-unauthenticated`` is given, which is itself refused on a
non-loopback address. The bridge exits with the server's exit code when its primary
process exits (127 when it could not start) and shuts down cleanly (exit 0) on SIGTERM
or SIGINT.
"""

from __future__ import annotations

import logging
import os
import signal
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import anyio
import typer

from clawplane.cli.bridgetraces import MetricFlags, TraceFlags, bridge_exports
from clawplane.cli.console import EXIT_INVALID, EXIT_USAGE, err
from clawplane.models import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TTL_MS,
    SessionMode,
    ToolApproval,
    ToolFilter,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

    from clawplane.runtimes import BridgeOptions, Endpoint, RuntimeStatus

_M = TypeVar("_M", bound="BaseModel")

CONTEXT_SETTINGS = {"allow_interspersed_args": False}
"""Everything after the command (or ``--``) belongs to the child, not to the bridge."""

TOKEN_ENV = "CLAWPLANE_BRIDGE_TOKEN"
AUDIT_LOG_ENV = "CLAWPLANE_AUDIT_LOG"
AUDIT_EXPORT_ENV = "CLAWPLANE_AUDIT_EXPORT_LOGS"
_LEVELS = ("debug", "info", "warning", "error")


def _say(text: str) -> None:
    err.print(f"clawplane bridge: {text}", markup=False)


def _fail(text: str, code: int = EXIT_USAGE) -> typer.Exit:
    _say(text)
    return typer.Exit(code)


def _read_token(path: Path) -> str:
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise _fail(f"--token-file {path} is not a regular file")
        if info.st_size > 4096:
            raise _fail(f"--token-file {path} is larger than 4 KiB; it should hold one token")
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise _fail(f"cannot read --token-file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise _fail(f"--token-file {path} is not UTF-8 text") from None
    if not token or any(c.isspace() for c in token):
        raise _fail(f"--token-file {path} must hold one token (no spaces or line breaks)")
    if info.st_mode & 0o004:
        _say(f"warning: {path} is readable by every user on this machine; chmod 600 it")
    return token


def _tool_approval(text: str) -> ToolApproval:
    return _json_option(ToolApproval, text, "--tool-approval", "toolApproval")


def _tool_filter(text: str) -> ToolFilter:
    return _json_option(ToolFilter, text, "--tool-filter", "toolFilter")


def _json_option(model: type[_M], text: str, flag: str, field: str) -> _M:
    """A JSON option parsed as the McpServer field it carries, or a usage error naming the problem."""
    from pydantic import ValidationError

    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors())
        raise _fail(f"{flag} is not a {field} object: {problems}") from None


def _address(text: str, default_port: int | None, flag: str) -> tuple[str, int]:
    """``HOST[:PORT]`` (``[v6]:PORT`` for IPv6) as (host, port)."""
    from urllib.parse import urlsplit

    text = text.strip()
    if text.count(":") > 1 and not text.startswith("["):
        text = f"[{text}]"  # a bare IPv6 address, as $(POD_IP) is on an IPv6 cluster
    try:
        parts = urlsplit(f"//{text}")
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        raise _fail(f"{flag} {text!r} is not HOST:PORT ({exc})") from None
    port = port if port is not None else default_port
    if not host or port is None or port == 0:
        raise _fail(f"{flag} {text!r} is not HOST:PORT (a host and a non-zero port)")
    return host, port


def bridge(
    command: Annotated[
        list[str],
        typer.Argument(help="The stdio MCP server to run, after `--`.", metavar="-- COMMAND [ARGS]..."),
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0 picks a free one).")] = 8080,
    name: Annotated[str | None, typer.Option("--name", help="Server name in logs and errors.")] = None,
    token_file: Annotated[
        Path | None,
        typer.Option("--token-file", help=f"File with the token clients must send (or set {TOKEN_ENV})."),
    ] = None,
    allow_unauthenticated: Annotated[
        bool,
        typer.Option("--allow-unauthenticated", help="Serve without a token (loopback addresses only)."),
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option("--allowed-host", help="Host header to accept on a non-loopback address (repeatable)."),
    ] = None,
    sessions: Annotated[
        SessionMode,
        typer.Option("--sessions", help="perClient: a process per client session; shared: one for all."),
    ] = SessionMode.PER_CLIENT,
    max_sessions: Annotated[
        int,
        typer.Option(
            "--max-sessions",
            min=1,
            max=10_000,
            help="Client sessions allowed at once; when full, the least recently used idle one makes room.",
        ),
    ] = DEFAULT_MAX_SESSIONS,
    max_sessions_per_consumer: Annotated[
        int | None,
        typer.Option(
            "--max-sessions-per-consumer",
            min=1,
            max=10_000,
            help="Sessions one token may hold (default: all of --max-sessions; the bridge has one token).",
        ),
    ] = None,
    session_idle_ttl_ms: Annotated[
        int,
        typer.Option(
            "--session-idle-ttl-ms", min=1, help="Close a client session idle this long after its last use."
        ),
    ] = DEFAULT_SESSION_IDLE_TTL_MS,
    tool_approval: Annotated[
        str | None,
        typer.Option("--tool-approval", help="toolApproval JSON: the calls it holds are refused."),
    ] = None,
    tool_filter: Annotated[
        str | None,
        typer.Option("--tool-filter", help="toolFilter JSON: the tools it hides are not listed and refused."),
    ] = None,
    log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning or error.")] = "warning",
    advertise: Annotated[
        str | None,
        typer.Option(
            "--advertise", help="HOST[:PORT] the other replicas reach this one at (default: --host:--port)."
        ),
    ] = None,
    peer: Annotated[
        list[str] | None,
        typer.Option("--peer", help="HOST:PORT of another replica of this server (repeatable)."),
    ] = None,
    peers_dns: Annotated[
        str | None,
        typer.Option("--peers-dns", help="DNS name whose addresses are the replicas (a headless Service)."),
    ] = None,
    traces_endpoint: Annotated[
        str | None,
        typer.Option(
            "--traces-endpoint",
            help="OTLP/HTTP traces URL to export spans to (default: OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT).",
        ),
    ] = None,
    trace_header: Annotated[
        list[str] | None,
        typer.Option(
            "--trace-header",
            help="NAME=VAR: send header NAME with the value of environment variable VAR (repeatable; "
            "VAR is not passed on to the server).",
        ),
    ] = None,
    service_name: Annotated[
        str | None,
        typer.Option("--service-name", help="service.name of the spans (default: OTEL_SERVICE_NAME)."),
    ] = None,
    trace_sample_ratio: Annotated[
        float | None,
        typer.Option(
            "--trace-sample-ratio",
            min=0.0,
            max=1.0,
            help="Share of new traces recorded (default: OTEL_TRACES_SAMPLER*).",
        ),
    ] = None,
    trace_payloads: Annotated[
        bool, typer.Option("--trace-payloads", help="Record redacted tool arguments and results on spans.")
    ] = False,
    metrics_export: Annotated[
        bool | None,
        typer.Option(
            "--metrics-export/--no-metrics-export",
            help="Also push what /metrics serves over OTLP to the traces' collector (/v1/metrics) "
            "(default: OTEL_METRICS_EXPORTER, else whether OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set).",
        ),
    ] = None,
    metrics_interval: Annotated[
        int | None,
        typer.Option(
            "--metrics-interval",
            help="Seconds between metric exports, 5 to 3600 (default: OTEL_METRIC_EXPORT_INTERVAL, else 60).",
        ),
    ] = None,
    audit_log: Annotated[
        bool,
        typer.Option(
            "--audit-log",
            envvar=AUDIT_LOG_ENV,
            help="Print one JSON line per finished tools/call on stdout (never arguments or results).",
        ),
    ] = False,
    audit_export_logs: Annotated[
        bool,
        typer.Option(
            "--audit-export-logs",
            envvar=AUDIT_EXPORT_ENV,
            help="Export each tools/call as an OTLP log record to the traces' collector (/v1/logs).",
        ),
    ] = False,
) -> None:
    """Run one stdio MCP server and serve it at http://HOST:PORT/mcp until it exits."""
    from clawplane.runtimes import BridgeOptions
    from clawplane.runtimes.proxy import is_loopback

    if not command:
        raise _fail("give the server command after `--`")
    if log_level not in _LEVELS:
        raise _fail(f"--log-level must be one of {', '.join(_LEVELS)}")
    # Taken out of the environment the server inherits, whether or not it is the token in use.
    token_env = (os.environ.pop(TOKEN_ENV, None) or "").strip() or None
    token = _read_token(token_file) if token_file is not None else token_env
    if allow_unauthenticated and not is_loopback(host):
        raise _fail(
            f"--allow-unauthenticated is refused on {host}: anyone who can reach it could call every tool; "
            "give --token-file instead"
        )
    if token is None and not allow_unauthenticated:
        raise _fail(
            f"no token: give --token-file PATH (or set {TOKEN_ENV}); "
            "--allow-unauthenticated serves without one, on loopback only"
        )
    gated = _tool_approval(tool_approval) if tool_approval is not None else None
    hidden = _tool_filter(tool_filter) if tool_filter is not None else None
    from clawplane.reconcile.logs import configure_logging

    configure_logging("text", level=getattr(logging, log_level.upper()))
    wanted = TraceFlags(
        traces_endpoint, tuple(trace_header or ()), service_name, trace_sample_ratio, trace_payloads
    )
    trace, metrics = bridge_exports(
        wanted,
        MetricFlags(metrics_export, metrics_interval),
        os.environ,
        _fail,
        lambda text: _say(f"warning: {text}"),
    )
    _keep_out_of_proc()
    options = BridgeOptions(
        host=host,
        port=port,
        name=name,
        token=None if allow_unauthenticated and token is None else token,
        allow_unauthenticated=allow_unauthenticated,
        allowed_hosts=frozenset(h.lower() for h in allowed_host or ()),
        sessions=sessions,
        max_sessions=max_sessions,
        max_sessions_per_consumer=max_sessions_per_consumer,
        session_idle_ttl_ms=session_idle_ttl_ms,
        tool_approval=gated,
        tool_filter=hidden,
        advertise=None if advertise is None else _address(advertise, port, "--advertise"),
        peers=tuple(_address(p, None, "--peer") for p in peer or ()),
        peers_dns=peers_dns.strip() or None if peers_dns else None,
        trace=trace,
        metrics=metrics,
        audit_log=sys.stdout if audit_log else None,
        export_logs=audit_export_logs,
    )
    code = anyio.run(_serve, command, options)
    raise typer.Exit(code)


def _keep_out_of_proc() -> None:
    """The server runs as this user: keep it out of the bridge's ``/proc`` (its initial environment
    names the token and the collector's headers, its memory holds them)."""
    from clawplane._utils.nondumpable import forbid_inspection

    why = forbid_inspection()
    if why is not None and sys.platform.startswith("linux"):
        _say(f"warning: processes of this user can read the bridge's environment in /proc: {why}")


def _announce(endpoint: Endpoint) -> None:
    _say(f"listening on {endpoint.url()} (health: {endpoint.health_url}); starting the server")


def _ready(status: RuntimeStatus) -> None:
    _say(f"ready: {status.tool_count} tools ({status.protocol_version})")


async def _serve(command: list[str], options: BridgeOptions) -> int:
    # Imported here: the MCP SDK takes most of a second to import, and only this command needs it.
    from clawplane.runtimes import PortInUseError, run_bridge

    code = 0
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            nonlocal code
            try:
                outcome = await run_bridge(command, options, on_ready=_announce, on_server_ready=_ready)
            except PortInUseError as exc:
                _say(f"cannot listen: {exc}; pick another with --port (0 picks a free one)")
                code = EXIT_INVALID
            except OSError as exc:
                _say(f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}")
                code = EXIT_INVALID
            else:
                code = outcome.code
                what = "could not start" if not outcome.started else "stopped"
                _say(f"the server {what}: {outcome.reason} (exit {outcome.code})")
                for line in outcome.stderr:
                    _say(f"  stderr: {line}")
                if not outcome.started:
                    _say("check the command and its environment; run it by hand to see its own output")
            tg.cancel_scope.cancel()

        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            tg.start_soon(run)
            async for received in signals:
                _say(f"{received.name}, shutting down")
                tg.cancel_scope.cancel()
                break
    return code
