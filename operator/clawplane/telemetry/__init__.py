"""clawplane.telemetry: what the proxy and the engine report about the work they do.

Every MCP request the proxy carries becomes a ``Call`` at ``CallTelemetry.begin`` and a
``CallRecord`` when it ends; the sinks registered on the ``CallTelemetry`` turn those into
Prometheus metrics (``metrics``), the last hour of traffic per server and agent that the
dashboard charts (``series``) and OpenTelemetry spans (``tracing``, exported as ``otel``
configures; the engine's passes and actions in ``engine``). Nothing here knows MCP's SDK, HTTP
or the state database: the layers above hand in what they see. ``logexport`` sends the audit trail's
records on as OTLP log records; ``metricexport`` pushes what ``/metrics`` serves over OTLP too
(mapped by ``promotlp``).

Only ``calls`` is imported with the package: the proxy's types are needed everywhere (the state
database's audit trail, every command that reads it), while the sinks load prometheus_client and
OpenTelemetry, which a command that only reads status should not pay for (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clawplane._utils.lazy import LazyNames
from clawplane.telemetry.calls import (
    TOOL_CALL_EVENT,
    TRACE_KEYS,
    UPSTREAM_CONTEXT,
    Call,
    CallRecord,
    CallSink,
    CallSite,
    CallTelemetry,
    Outcome,
)

if TYPE_CHECKING:
    from clawplane.telemetry.engine import ActionSpan, PassSpan, action_span
    from clawplane.telemetry.logexport import EVENT_NAME, CallLogExport, logs_endpoint
    from clawplane.telemetry.metricexport import MetricConfig, MetricExporter, metric_config
    from clawplane.telemetry.metrics import CallMetrics, bounded_method, session_hooks
    from clawplane.telemetry.otel import TraceConfig, Tracing, trace_config
    from clawplane.telemetry.series import FAILED, CallSeries, Minute
    from clawplane.telemetry.tracing import SEMCONV, CallSpans, span_name

_HOMES = {
    "ActionSpan": "clawplane.telemetry.engine",
    "PassSpan": "clawplane.telemetry.engine",
    "action_span": "clawplane.telemetry.engine",
    "EVENT_NAME": "clawplane.telemetry.logexport",
    "CallLogExport": "clawplane.telemetry.logexport",
    "logs_endpoint": "clawplane.telemetry.logexport",
    "MetricConfig": "clawplane.telemetry.metricexport",
    "MetricExporter": "clawplane.telemetry.metricexport",
    "metric_config": "clawplane.telemetry.metricexport",
    "CallMetrics": "clawplane.telemetry.metrics",
    "bounded_method": "clawplane.telemetry.metrics",
    "session_hooks": "clawplane.telemetry.metrics",
    "TraceConfig": "clawplane.telemetry.otel",
    "Tracing": "clawplane.telemetry.otel",
    "trace_config": "clawplane.telemetry.otel",
    "FAILED": "clawplane.telemetry.series",
    "CallSeries": "clawplane.telemetry.series",
    "Minute": "clawplane.telemetry.series",
    "SEMCONV": "clawplane.telemetry.tracing",
    "CallSpans": "clawplane.telemetry.tracing",
    "span_name": "clawplane.telemetry.tracing",
}

__all__ = [
    "EVENT_NAME",
    "FAILED",
    "SEMCONV",
    "TOOL_CALL_EVENT",
    "TRACE_KEYS",
    "UPSTREAM_CONTEXT",
    "ActionSpan",
    "Call",
    "CallLogExport",
    "CallMetrics",
    "CallRecord",
    "CallSeries",
    "CallSink",
    "CallSite",
    "CallSpans",
    "CallTelemetry",
    "MetricConfig",
    "MetricExporter",
    "Minute",
    "Outcome",
    "PassSpan",
    "TraceConfig",
    "Tracing",
    "action_span",
    "bounded_method",
    "logs_endpoint",
    "metric_config",
    "session_hooks",
    "span_name",
    "trace_config",
]

_names = LazyNames(__name__, _HOMES, globals())


def __getattr__(name: str) -> Any:
    """Import the module that defines a public name when it is first read."""
    return _names.getattr(name)


def __dir__() -> list[str]:
    """The public names, loaded or not."""
    return _names.dir()
