"""What ``clawplane bridge`` reports besides ``/metrics``: spans, the audit log, OTLP log records.

The bridge carries calls through the same proxy as the supervisor's hosted endpoint, so the same
sinks observe them: ``CallSpans`` (the SERVER and CLIENT span of each call, exported as
``TraceConfig`` says), and in place of the state database's trail an ``AuditLines`` stream (one
JSON line per ``tools/call`` on stdout, what ``kubectl logs`` shows) and, when asked, the same
records as OTLP log records (``CallLogExport``). Its ``/metrics`` registry is pushed over OTLP
as ``MetricConfig`` says (``MetricExporter``, the supervisor's), once more as it ends. Each part
loads its OpenTelemetry modules only when it is on: a bridge without traces or log export imports
none of the SDK. ``close`` writes and exports what is pending, flushes the spans, then sends the
last metric export.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from clawplane.state.calllines import AuditLines
from clawplane.telemetry import CallTelemetry

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from clawplane.telemetry import CallLogExport, MetricConfig, MetricExporter, TraceConfig, Tracing

__all__ = ["BridgeTelemetry"]

log = logging.getLogger(__name__)


@dataclass
class BridgeTelemetry:
    """The sinks the bridge attached for traces and the audit log, to be closed when it ends."""

    tracing: Tracing | None = None
    lines: AuditLines | None = None
    export: CallLogExport | None = None
    metrics: MetricExporter | None = None

    @classmethod
    def attach(
        cls,
        telemetry: CallTelemetry,
        *,
        trace: TraceConfig | None,
        audit_log: TextIO | None,
        export_logs: bool,
        registry: CollectorRegistry | None = None,
        metrics: MetricConfig | None = None,
    ) -> BridgeTelemetry:
        """Add to ``telemetry`` the sinks these settings turn on (none: nothing is loaded); push
        ``registry`` as ``metrics`` says."""
        found = cls()
        if registry is not None and metrics is not None:
            from clawplane.telemetry import MetricExporter

            found.metrics = MetricExporter(registry)
            found.metrics.configure(metrics)
        if trace is not None:
            from clawplane.telemetry import CallSpans, Tracing

            found.tracing = Tracing()
            found.tracing.configure(trace)
            telemetry.add(CallSpans(found.tracing))
        if export_logs:
            found.export = _log_export(trace)
        if audit_log is not None or found.export is not None:
            found.lines = AuditLines(audit_log, found.export)
            telemetry.add(found.lines)
        return found

    def close(self) -> None:
        """Write and export the calls still queued, then flush the spans (a clean exit loses none)."""
        if self.lines is not None:
            self.lines.close()
        if self.export is not None:
            self.export.close()
        if self.tracing is not None:
            self.tracing.shutdown()
        if self.metrics is not None:  # last: its final export counts every call above
            self.metrics.shutdown()


def _log_export(trace: TraceConfig | None) -> CallLogExport | None:
    """The OTLP logs export to the traces' collector (``/v1/logs``), with the traces' headers."""
    from clawplane.telemetry import CallLogExport, logs_endpoint

    endpoint = logs_endpoint(trace.endpoint if trace is not None else None)
    if endpoint is None:
        log.warning(
            "audit log export is on but no collector is set; give --traces-endpoint or set "
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        )
        return None
    if trace is None:  # the exporter reads OTEL_EXPORTER_OTLP_(LOGS_)HEADERS itself
        return CallLogExport(endpoint)
    return CallLogExport(endpoint, service_name=trace.service_name, headers=dict(trace.headers))
