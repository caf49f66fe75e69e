"""clawplane.telemetry: what the proxy and the engine report about the work they do.

Every MCP request the proxy carries becomes a ``Call`` at ``CallTelemetry.begin`` and a
``CallRecord`` when it ends; the sinks registered on the ``CallTelemetry`` turn those into
Prometheus metrics (``metrics``) and the last hour of traffic per server and agent that the
dashboard charts (``series``). Nothing here knows MCP's SDK, HTTP or the state
database: the layers above hand in what they see. ``logexport`` (imported where it is used, not
here: it loads the OpenTelemetry SDK) sends the audit trail's records on as OTLP log records.
"""

from clawplane.telemetry.calls import TRACE_KEYS, Call, CallRecord, CallSink, CallSite, CallTelemetry, Outcome
from clawplane.telemetry.metrics import CallMetrics, bounded_method, session_hooks
from clawplane.telemetry.series import FAILED, CallSeries, Minute

__all__ = [
    "FAILED",
    "TRACE_KEYS",
    "Call",
    "CallMetrics",
    "CallRecord",
    "CallSeries",
    "CallSink",
    "CallSite",
    "CallTelemetry",
    "Minute",
    "Outcome",
    "bounded_method",
    "session_hooks",
]
