"""Prometheus metrics of MCP traffic: per server, method, tool and outcome, with bounded labels.

A label value is a time series for as long as the process lives, so nothing a client chooses
freely becomes one: a method outside MCP's own is ``_other``, a tool the server does not list is
``_unknown``, and past ``MAX_TOOLS_PER_SERVER`` distinct tools a server's further ones are
``_other``. Consumers, sessions, arguments and resource URIs are never labels.
"""

from __future__ import annotations

import threading
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from clawplane.telemetry.calls import Call, CallRecord, CallTelemetry

__all__ = ["MAX_TOOLS_PER_SERVER", "METHODS", "CallMetrics", "bounded_method", "session_hooks"]

MAX_TOOLS_PER_SERVER = 256
METHODS = frozenset(
    {
        "initialize", "ping", "server/discover", "tools/list", "tools/call", "resources/list",
        "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
        "prompts/list", "prompts/get", "completion/complete", "logging/setLevel", "subscriptions/listen",
        "tasks/get", "tasks/list", "tasks/result", "tasks/cancel", "skills/list",
    }
)  # fmt: skip
"""The request methods of MCP's revisions; anything else is counted as ``_other``."""
# Seconds: a cached answer takes a millisecond, a tool that browses or builds takes minutes.
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
WAIT_BUCKETS = (0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)


def bounded_method(method: str) -> str:
    """``method`` when it is one of MCP's, else ``_other``."""
    return method if method in METHODS else "_other"


class CallMetrics:
    """A ``CallSink`` that counts and times requests in ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Histogram(
            "clawplane_mcp_request_duration_seconds",
            "MCP requests through clawplane's endpoints, by how long they took until answered "
            "(the _count series counts them)",
            ["endpoint", "server", "method", "tool", "outcome"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.holds = Counter(
            "clawplane_approval_holds",
            "Tool calls held for an approval, by how the wait ended",
            ["server", "verdict"],
            registry=registry,
        )
        self.waits = Histogram(
            "clawplane_approval_wait_seconds",
            "How long held tool calls waited for their answer",
            ["server"],
            buckets=WAIT_BUCKETS,
            registry=registry,
        )
        self.errors = Counter(
            "clawplane_mcp_request_errors",
            "MCP requests that ended in a JSON-RPC error, by its code (codes outside the JSON-RPC and "
            "MCP bands are counted as other)",
            ["server", "method", "code"],
            registry=registry,
        )
        self.sessions = Gauge(
            "clawplane_mcp_sessions",
            "Client sessions an endpoint holds now (server is empty for the agent and control endpoints, "
            "whose sessions are counted together)",
            ["endpoint", "server"],
            registry=registry,
        )
        self.refusals = Counter(
            "clawplane_mcp_session_refusals",
            "New client sessions refused because the endpoint (or the consumer's share) was full and none "
            "of the sessions that would have to make room was idle",
            ["endpoint", "server"],
            registry=registry,
        )
        self._tools: dict[str, set[str]] = {}
        self._lock = threading.Lock()
        # The histogram's child per label values (bounded as the labels are): ``labels()`` checks
        # and locks on every call, most of this sink's time on the event loop.
        self._timed: dict[tuple[str, str, str, str, str], Any] = {}

    def _tool(self, call: Call) -> str:
        name = call.target
        if call.method != "tools/call" or name is None:
            return ""
        known = call.site.known_tool
        if known is not None and not known(name):
            return "_unknown"
        with self._lock:
            seen = self._tools.setdefault(call.site.server, set())
            if name not in seen:
                if len(seen) >= MAX_TOOLS_PER_SERVER:
                    return "_other"
                seen.add(name)
        return name

    def session_count(self, endpoint: str, server: str, count: int) -> None:
        """``server``'s sessions on ``endpoint`` are now ``count``."""
        self.sessions.labels(endpoint, server).set(count)

    def session_refused(self, endpoint: str, server: str) -> None:
        """A new session of ``server`` on ``endpoint`` was refused at its limit."""
        self.refusals.labels(endpoint, server).inc()

    def begin(self, call: Call) -> None:
        """Nothing to count until the call ends."""

    def forwarded(self, call: Call) -> None:
        """Nothing to record."""

    def held(self, call: Call) -> None:
        """Counted when the wait ends."""

    def released(self, call: Call, verdict: str) -> None:
        """Count one approval wait and its length."""
        self.holds.labels(call.site.server, verdict).inc()
        self.waits.labels(call.site.server).observe(call.held_s)

    def finished(self, call: Call, record: CallRecord) -> None:
        """Count and time one request."""
        method = bounded_method(record.method)
        key = (record.endpoint, record.server, method, self._tool(call), record.outcome.value)
        timed = self._timed.get(key)
        if timed is None:
            timed = self._timed[key] = self.requests.labels(*key)
        timed.observe(record.duration_s)
        if record.error_code is not None:
            code = record.error_code
            known = -32768 <= code <= -32000
            self.errors.labels(record.server, method, str(code) if known else "other").inc()


def session_hooks(telemetry: CallTelemetry | None, endpoint: str, server: str) -> dict[str, Any]:
    """A session ledger's ``on_refuse``/``on_count``, counted by ``telemetry``'s metrics (empty: none)."""
    metrics = telemetry.find(CallMetrics) if telemetry is not None else None
    if metrics is None:
        return {}

    def refused() -> None:
        metrics.session_refused(endpoint, server)

    def counted(count: int) -> None:
        metrics.session_count(endpoint, server, count)

    return {"on_refuse": refused, "on_count": counted}
