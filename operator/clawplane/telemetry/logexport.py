"""The audit trail as OpenTelemetry logs: each recorded tool call exported as one OTLP log record.

``Gateway.spec.observability.audit.exportLogs`` turns it on; the records go over OTLP/HTTP
(protobuf) to the traces' collector, at its ``/v1/logs`` (``logs_endpoint``). The SDK's batch
processor keeps its own bounded queue and thread: a collector that is slow or down costs
dropped log records, never a wait for the audit writer that hands them in. A record carries
what the trail's row holds (never arguments or results), its error redacted once more.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource

from clawplane.secrets import redact
from clawplane.telemetry.calls import TOOL_CALL_EVENT, CallRecord, Outcome
from clawplane.telemetry.otel import signal_endpoint

__all__ = ["EVENT_NAME", "CallLogExport", "logs_endpoint"]

EVENT_NAME = TOOL_CALL_EVENT
_SEVERITY = {
    Outcome.OK: SeverityNumber.INFO,
    Outcome.TOOL_ERROR: SeverityNumber.WARN,
    Outcome.REFUSED: SeverityNumber.WARN,
    Outcome.CANCELLED: SeverityNumber.INFO,
    Outcome.ERROR: SeverityNumber.ERROR,
}


def logs_endpoint(traces_endpoint: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """Where logs go: the traces URL with ``/traces`` made ``/logs``, else
    ``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT``, else ``OTEL_EXPORTER_OTLP_ENDPOINT`` plus ``/v1/logs`` (or None)."""
    return signal_endpoint("logs", traces_endpoint, os.environ if env is None else env)


class CallLogExport:
    """Exports recorded tool calls as OTLP log records to ``endpoint`` (call ``close`` to flush)."""

    def __init__(
        self,
        endpoint: str,
        *,
        service_name: str | None = None,
        headers: Mapping[str, str] | None = None,
        schedule_delay_ms: float = 1000,
    ) -> None:
        self.endpoint = endpoint
        self.service_name = service_name
        self.headers = tuple(sorted((headers or {}).items()))
        """The headers sent (values never shown; compared to tell a changed export)."""
        name = service_name or os.environ.get("OTEL_SERVICE_NAME") or "clawplane"
        self._provider = LoggerProvider(
            resource=Resource.create({"service.name": name}), shutdown_on_exit=False
        )
        exporter = OTLPLogExporter(endpoint=endpoint, headers=dict(headers) if headers else None, timeout=5)
        self._provider.add_log_record_processor(
            BatchLogRecordProcessor(
                exporter, schedule_delay_millis=schedule_delay_ms, export_timeout_millis=5000
            )
        )
        self._logger = self._provider.get_logger("clawplane.audit")

    def __call__(self, records: Sequence[CallRecord]) -> None:
        """Hand ``records`` to the batch processor (it exports them on its own thread)."""
        for record in records:
            self._logger.emit(
                timestamp=int(record.at * 1e9),
                severity_number=_SEVERITY.get(record.outcome, SeverityNumber.INFO),
                severity_text=_SEVERITY.get(record.outcome, SeverityNumber.INFO).name,
                body=f"tools/call {record.server}/{record.target or ''}: {record.outcome.value}",
                attributes=_attributes(record),
                event_name=EVENT_NAME,
            )

    def flush(self, timeout_ms: int = 5000) -> bool:
        """Export what is pending now; whether it all went."""
        return self._provider.force_flush(timeout_ms)

    def close(self) -> None:
        """Export what is pending and stop the processor's thread."""
        self._provider.shutdown()


def _attributes(record: CallRecord) -> dict[str, str | int | float]:
    found: dict[str, str | int | float] = {
        "mcp.method.name": record.method,
        "gen_ai.tool.name": record.target or "",
        "clawplane.endpoint": record.endpoint,
        "clawplane.server": record.server,
        "clawplane.consumer": record.consumer,
        "clawplane.outcome": record.outcome.value,
        "clawplane.duration_ms": round(record.duration_s * 1000, 3),
        "clawplane.held_ms": round(record.held_s * 1000, 3),
        "clawplane.bytes_in": record.bytes_in,
        "clawplane.bytes_out": record.bytes_out,
    }
    optional = {
        "clawplane.agent": record.agent,
        "mcp.session.id": record.session,
        "mcp.protocol.version": record.revision,
        "rpc.jsonrpc.error_code": record.error_code,
        "error.message": redact(record.error) if record.error else None,
    }
    found.update({k: v for k, v in optional.items() if v is not None})
    return found
