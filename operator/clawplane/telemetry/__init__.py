"""clawplane.telemetry: what the proxy and the engine report about the work they do.

Every MCP request the proxy carries becomes a ``Call`` at ``CallTelemetry.begin`` and a
``CallRecord`` when it ends; the sinks registered on the ``CallTelemetry`` turn those into
Prometheus metrics (``metrics``), the last hour of traffic per server and agent that the
dashboard charts (``series``) and OpenTelemetry spans (``tracing``, exported as ``otel``
configures; the engine's passes and actions in ``engine``). Nothing here knows MCP's SDK, HTTP
or the state database: the layers above hand in what they see. ``logexport`` (imported where it
is used, not here: it loads the OpenTelemetry SDK) sends the audit trail's records on as OTLP
log records.
"""

from clawplane.telemetry.calls import (
    TRACE_KEYS,
    UPSTREAM_CONTEXT,
    Call,
    CallRecord,
    CallSink,
    CallSite,
    CallTelemetry,
    Outcome,
)
from clawplane.telemetry.engine import ActionSpan, PassSpan, action_span
from clawplane.telemetry.metrics import CallMetrics, bounded_method, session_hooks
from clawplane.telemetry.otel import TraceConfig, Tracing, trace_config
from clawplane.telemetry.series import FAILED, CallSeries, Minute
from clawplane.telemetry.tracing import SEMCONV, CallSpans, span_name

__all__ = [
    "FAILED",
    "SEMCONV",
    "TRACE_KEYS",
    "UPSTREAM_CONTEXT",
    "ActionSpan",
    "Call",
    "CallMetrics",
    "CallRecord",
    "CallSeries",
    "CallSink",
    "CallSite",
    "CallSpans",
    "CallTelemetry",
    "Minute",
    "Outcome",
    "PassSpan",
    "TraceConfig",
    "Tracing",
    "action_span",
    "bounded_method",
    "session_hooks",
    "span_name",
    "trace_config",
]
