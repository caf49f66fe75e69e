"""The standalone bridge: one stdio server served over streamable HTTP (``clawplane bridge``).

This is the container entrypoint of the Kubernetes driver: ``clawplane bridge --host 0.0.0.0
--token-file … -- COMMAND ARGS…``. It serves its server at ``/mcp`` (and ``/healthz``)
through the same proxy as the supervisor's hosted endpoint — one process per client
session by default — never restarts the primary process, and returns its exit code when
it exits (Kubernetes restarts the container). Children get the bridge's whole
environment, which is the container's. When the bridge runs as PID 1 it also reaps
orphaned descendants, as an init process must. Cancelling ``run_bridge`` (the CLI does on
SIGTERM/SIGINT) tears every child down cleanly.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import anyio
from prometheus_client import CollectorRegistry, make_asgi_app
from starlette.types import ASGIApp

from clawplane.models import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TTL_MS,
    McpServerSpec,
    SessionMode,
    ToolApproval,
    ToolFilter,
)
from clawplane.runtimes.bridgetelemetry import BridgeTelemetry
from clawplane.runtimes.process import reaping, watch_children_with_pidfds
from clawplane.runtimes.proxy import (
    Endpoint,
    PeerSet,
    Principal,
    ReplicaRouter,
    RequestGuard,
    Route,
    TokenTable,
    bind,
    replica_tag,
)
from clawplane.runtimes.settings import RuntimeSettings
from clawplane.runtimes.status import Phase, RuntimeStatus
from clawplane.runtimes.supervisor import Supervisor
from clawplane.telemetry import CallMetrics, CallTelemetry

if TYPE_CHECKING:
    from clawplane.telemetry import MetricConfig, TraceConfig

__all__ = ["BridgeOptions", "BridgeOutcome", "run_bridge"]

_REAP_SECONDS = 1.0
METRICS_PATH = "/metrics"


@dataclass(frozen=True, slots=True)
class BridgeOptions:
    """How the bridge listens, authenticates and isolates clients."""

    host: str = "127.0.0.1"
    port: int = 8080
    name: str | None = None
    token: str | None = None
    """The bearer token clients must send; None only with ``allow_unauthenticated``."""
    allow_unauthenticated: bool = False
    allowed_hosts: frozenset[str] = frozenset()
    sessions: SessionMode = SessionMode.PER_CLIENT
    max_sessions: int = DEFAULT_MAX_SESSIONS
    max_sessions_per_consumer: int | None = None
    """Sessions one token may hold; None: all of ``max_sessions`` (the bridge has one token, so no
    other consumer needs a share kept free; an idle session still makes room for a new one)."""
    session_idle_ttl_ms: int = DEFAULT_SESSION_IDLE_TTL_MS
    tool_approval: ToolApproval | None = None
    """The server's ``toolApproval``: the bridge has no approval queue, so it refuses those calls."""
    tool_filter: ToolFilter | None = None
    """The server's ``toolFilter``: hidden tools are left out of ``tools/list`` and refused."""
    settings: RuntimeSettings = field(default_factory=RuntimeSettings)
    advertise: tuple[str, int] | None = None
    """This replica's address as its peers reach it; with peers, session ids carry its tag."""
    peers: tuple[tuple[str, int], ...] = ()
    """Other replicas of the same server (``--peer``), for requests of sessions they hold."""
    peers_dns: str | None = None
    """A headless Service whose addresses are the replicas (``--peers-dns``), on ``advertise``'s port."""
    trace: TraceConfig | None = None
    """Export the spans of every call it carries so (None: no traces)."""
    metrics: MetricConfig | None = None
    """Also push what ``/metrics`` serves over OTLP so (None: served only)."""
    audit_log: TextIO | None = None
    """Write one JSON line per finished ``tools/call`` here (the audit trail of a bridge in a pod)."""
    export_logs: bool = False
    """Also export each ``tools/call`` as an OTLP log record, to the traces' collector."""

    @property
    def replicated(self) -> bool:
        """Whether this bridge is one of several replicas (routes sessions by id)."""
        return bool(self.peers or self.peers_dns)


@dataclass(frozen=True, slots=True)
class BridgeOutcome:
    """How the bridge ended: the server's exit code, and why."""

    code: int
    reason: str
    stderr: tuple[str, ...] = ()
    started: bool = True


async def _reaper(supervisor: Supervisor, name: str) -> None:
    while True:
        await anyio.sleep(_REAP_SECONDS)
        status = supervisor.status(name)
        keep = {pid for pid in (status.pid, *status.session_pids) if pid is not None}
        reaping.reap_orphans(keep)


def _guard(options: BridgeOptions, name: str) -> RequestGuard:
    if options.token is None:
        return RequestGuard(options.host, None, allowed_hosts=options.allowed_hosts)
    table = TokenTable.of({options.token: Principal("bridge", frozenset({name}))})
    return RequestGuard(options.host, table, allowed_hosts=options.allowed_hosts)


class _Router:
    """Makes the ``ReplicaRouter`` once the app it wraps is known."""

    def __init__(self, tag: str, peers: PeerSet) -> None:
        self.tag, self.peers = tag, peers
        self.router: ReplicaRouter | None = None

    def wrapping(self, app: ASGIApp) -> ASGIApp:
        self.router = ReplicaRouter(app, tag=self.tag, peers=self.peers)
        return self.router

    async def aclose(self) -> None:
        if self.router is not None:
            await self.router.aclose()


def _router(options: BridgeOptions, endpoint: Endpoint) -> _Router | None:
    if not options.replicated:
        return None
    host, port = options.advertise or (endpoint.host, endpoint.port)
    peers = PeerSet(port=port, static=options.peers, dns_name=options.peers_dns)
    return _Router(replica_tag(host, port), peers)


async def run_bridge(
    command: Sequence[str],
    options: BridgeOptions,
    *,
    on_ready: Callable[[Endpoint], None] | None = None,
    on_server_ready: Callable[[RuntimeStatus], None] | None = None,
) -> BridgeOutcome:
    """Serve ``command`` until its primary process exits; returns how it ended.

    ``/metrics`` on the same port (behind the same token) counts the requests it carries.

    ``on_ready`` is called with the endpoint once the socket listens, ``on_server_ready``
    once the server has listed its tools.

    Raises:
        PortInUseError: The port is taken.
        OSError: The address cannot be bound.
    """
    server = options.name or Path(command[0]).name or "server"
    spec = McpServerSpec(
        command=command[0],
        args=list(command[1:]),
        sessions=options.sessions,
        max_sessions=options.max_sessions,
        max_sessions_per_consumer=options.max_sessions_per_consumer or options.max_sessions,
        session_idle_ttl_ms=options.session_idle_ttl_ms,
        tool_approval=options.tool_approval,
        tool_filter=options.tool_filter,
    )
    # Its own registry: /metrics on the bridge's port (same token) counts what it carries, under
    # the names the folder supervisor uses, so one dashboard reads both.
    registry = CollectorRegistry(auto_describe=True)
    telemetry = options.settings.telemetry or CallTelemetry([CallMetrics(registry)])
    settings = replace(options.settings, max_restarts=0, inherit_environment=True, telemetry=telemetry)
    sock = bind(options.host, options.port)  # before anything starts: a busy port fails fast and plainly
    watch_children_with_pidfds()  # the bridge process runs this one loop
    observers = BridgeTelemetry.attach(
        telemetry,
        trace=options.trace,
        audit_log=options.audit_log,
        export_logs=options.export_logs,
        registry=registry,
        metrics=options.metrics,
    )
    try:
        async with Supervisor(settings=settings) as supervisor:
            guard = _guard(options, server)
            endpoint = await supervisor.expose(guard, default=server, sock=sock)
            supervisor.mount(
                METRICS_PATH, Route(make_asgi_app(registry=registry), lambda _who, rest: not rest)
            )
            router = _router(options, endpoint)
            if router is not None:
                supervisor.wrap_endpoint(router.wrapping)
            await supervisor.ensure(server, spec, config_hash="bridge", base_dir=Path.cwd())
            async with anyio.create_task_group() as tg:
                if os.getpid() == 1:
                    tg.start_soon(_reaper, supervisor, server)
                if on_ready is not None:
                    on_ready(endpoint)
                status = await supervisor.wait_settled(server)
                if status.phase is Phase.READY and on_server_ready is not None:
                    on_server_ready(status)
                started = status.phase is Phase.READY
                status = await supervisor.wait_until(server, lambda s: s.phase is Phase.FAILED)
                stderr = tuple(supervisor.stderr(server)[-10:])
                tg.cancel_scope.cancel()
            if router is not None:
                await router.aclose()
    finally:
        observers.close()  # after the supervisor closed: every call it carried has finished
    code = status.exit_code
    reason = status.last_error or "the server stopped"
    if code is None:
        return BridgeOutcome(127, reason, stderr, started=started)
    return BridgeOutcome(code if code >= 0 else 128 - code, reason, stderr, started=started)
