"""The supervisor's health and metrics endpoint: ``/healthz``, ``/readyz``, ``/metrics``.

Metrics live in a private ``CollectorRegistry`` (never the process-global one) and are
served in the Prometheus text format by a small stdlib HTTP server on a loopback
address, in a thread of its own, stopped with the supervisor. Requests pass the same
Host/Origin checks as the hosted endpoint; ``/metrics`` also needs a token with the
``read`` scope (the ``cli`` consumer's: ``clawplane token show PATH cli``), while the
probes answer only ``ok``/``ready`` and need none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from clawplane.planning import Plan, ReasonCode
from clawplane.runtimes import RequestGuard
from clawplane.state import ObservedState

DRIFT_REASONS = frozenset(
    {
        ReasonCode.RUNTIME_MISSING,
        ReasonCode.RUNTIME_CRASHED,
        ReasonCode.RUNTIME_PAUSED_EXPIRED,
        ReasonCode.TOOLS_DRIFTED,
    }
)
"""Reasons that say the world moved while the folder did not: acting on them repairs drift."""


class LoopMetrics:
    """Every metric of the reconcile loop, in a private registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.reconciles = Counter(
            "clawplane_reconciles", "Reconcile passes by result", ["result"], registry=r
        )
        self.duration = Histogram(
            "clawplane_reconcile_duration_seconds",
            "Duration of reconcile passes",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=r,
        )
        self.errors = Counter(
            "clawplane_reconcile_errors", "Failed reconciles and failed actions", registry=r
        )
        self.runtimes = Gauge("clawplane_runtimes", "Runtimes by phase", ["phase"], registry=r)
        self.restarts = Gauge(
            "clawplane_runtime_restarts", "Restarts of each runtime", ["server"], registry=r
        )
        self.crashes = Counter("clawplane_runtime_crashes", "Crashes seen per server", ["server"], registry=r)
        self.tools = Gauge("clawplane_server_tools", "Tools discovered per server", ["server"], registry=r)
        self.session_evictions = Gauge(
            "clawplane_session_evictions",
            "Idle client sessions the hosted endpoint ended to make room for new ones, per server",
            ["server"],
            registry=r,
        )
        self.prompt_chars = Gauge(
            "clawplane_agent_prompt_chars", "Skills prompt characters per agent", ["agent"], registry=r
        )
        self.last_success = Gauge(
            "clawplane_last_successful_reconcile_timestamp_seconds",
            "Unix time of the last successful reconcile",
            registry=r,
        )
        self.folder_valid = Gauge("clawplane_folder_valid", "1 when the folder validates, else 0", registry=r)
        self.plan_actions = Gauge(
            "clawplane_plan_actions", "Actions the last reconcile pass planned (0: in sync)", registry=r
        )
        self.drift_repairs = Counter(
            "clawplane_drift_repairs",
            "Actions carried out because the world moved while the folder did not (a runtime missing or "
            "crashed, a pause expired, tools drifted upstream), by that reason",
            ["reason"],
            registry=r,
        )
        self.degraded = Gauge(
            "clawplane_degraded", "1 while writing it (loop.json, state, outputs) fails", ["what"], registry=r
        )

    def count_repairs(self, plan: Plan, results: Mapping[str, str]) -> None:
        """Count the actions done (``results``: ``ok``) because the world moved (``DRIFT_REASONS``)."""
        for change in plan.actionable:
            if results.get(change.key) == "ok":
                for code in {r.code for r in change.reasons} & DRIFT_REASONS:
                    self.drift_repairs.labels(reason=code.value).inc()

    def set_degraded(self, degraded: dict[str, str]) -> None:
        """Mirror what cannot be written right now."""
        self.degraded.clear()
        for what in degraded:
            self.degraded.labels(what=what).set(1)

    def observe_state(self, observed: ObservedState) -> None:
        """Refresh the state gauges from the state database's view."""
        phases: dict[str, int] = {}
        for rt in observed.runtimes.values():
            phases[rt.phase] = phases.get(rt.phase, 0) + 1
        self.runtimes.clear()
        for phase, count in phases.items():
            self.runtimes.labels(phase=phase).set(count)
        self.restarts.clear()
        for name, rt in observed.runtimes.items():
            self.restarts.labels(server=name).set(rt.restarts)
        self.tools.clear()
        for name, tools in observed.tools_observed.items():
            self.tools.labels(server=name).set(len(tools))
        self.prompt_chars.clear()
        self.session_evictions.clear()
        for rec in observed.resources.values():
            if rec.kind == "Agent" and "promptChars" in rec.status:
                self.prompt_chars.labels(agent=rec.name).set(float(rec.status["promptChars"]))
            if rec.kind == "McpServer" and "sessionEvictions" in rec.status:
                self.session_evictions.labels(server=rec.name).set(float(rec.status["sessionEvictions"]))

    def render(self) -> bytes:
        """The Prometheus text exposition."""
        return generate_latest(self.registry)


Probe = Callable[[], bool]


class MetricsServer:
    """``/healthz``, ``/readyz`` and ``/metrics`` over HTTP on a loopback port, in a thread."""

    def __init__(
        self,
        metrics: LoopMetrics,
        *,
        healthy: Probe,
        ready: Probe,
        guard: RequestGuard | None = None,
        role: Callable[[], str] | None = None,
        token_hint: str = "clawplane token show PATH cli",
    ) -> None:
        self.metrics, self.healthy, self.ready = metrics, healthy, ready
        self.guard = guard
        self.token_hint = token_hint
        """Where a 401 tells the caller to find the token."""
        self.role = role
        """What ``/readyz`` adds to its answer (e.g. ``leader``/``standby`` of an elected operator)."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` once started, else empty."""
        if self._server is None:
            return ""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Bind and serve in a background thread; returns the base URL."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                refusal = owner._refusal(self.headers.items(), needs_read=path == "/metrics")
                if refusal is not None:
                    self._send(*refusal)
                elif path == "/metrics":
                    self._send(200, owner.metrics.render(), CONTENT_TYPE_LATEST)
                elif path == "/healthz":
                    ok = owner.healthy()
                    self._send(200 if ok else 503, b"ok\n" if ok else b"not running\n")
                elif path == "/readyz":
                    ok = owner.ready()
                    role = f" ({owner.role()})" if owner.role is not None else ""
                    text = f"ready{role}\n" if ok else f"not ready{role}\n"
                    self._send(200 if ok else 503, text.encode())
                else:
                    self._send(404, b"not found\n")

            def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        server = ThreadingHTTPServer((host, port), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="clawplane-metrics", daemon=True)
        self._thread.start()
        return self.url

    def _refusal(self, headers: Iterable[tuple[str, str]], *, needs_read: bool) -> tuple[int, bytes] | None:
        """(status, body) when a request must be refused, else None."""
        guard = self.guard
        if guard is None:
            return None
        scope = {"headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]}
        if not guard.host_ok(scope):
            return 421, b"Invalid Host header\n"
        if not guard.origin_ok(scope):
            return 403, b"Invalid Origin header\n"
        if needs_read:
            principal = guard.principal(scope)
            if principal is None:
                return 401, f"/metrics needs Authorization: Bearer <token> ({self.token_hint})\n".encode()
            if "read" not in principal.scopes:
                return 403, b"this token has no read scope\n"
        return None

    def stop(self) -> None:
        """Stop serving and close the socket."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
