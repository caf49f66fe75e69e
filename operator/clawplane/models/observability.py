"""What clawplane reports about its own work: traces, metrics, the audit trail of tool calls.

``Gateway.spec.observability`` is clawplane's own (never rendered into openclaw.json, whose
``diagnostics.otel`` configures OpenClaw's exporter). ``/metrics`` needs no setting: it is served
whenever the supervisor has a metrics port; ``metrics`` also pushes them over OTLP.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from clawplane.models.base import Model, NonEmptyStr
from clawplane.models.values import SecretValue

__all__ = ["AuditSettings", "MetricExport", "Observability", "TraceExport"]

DEFAULT_AUDIT_RECORDS = 100_000
DEFAULT_AUDIT_DAYS = 30


class TraceExport(Model):
    """OpenTelemetry traces of clawplane's work, exported over OTLP/HTTP (protobuf)."""

    endpoint: NonEmptyStr | None = None
    """OTLP/HTTP traces URL, e.g. ``http://127.0.0.1:4318/v1/traces``. Absent: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, else ``OTEL_EXPORTER_OTLP_ENDPOINT`` plus ``/v1/traces``."""
    headers: dict[NonEmptyStr, SecretValue] = Field(default_factory=dict)
    """Headers sent with every export (an ``Authorization`` by ``valueFrom``); added to ``OTEL_EXPORTER_OTLP_HEADERS``."""
    sample_ratio: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of traces started here that are recorded (a client's sampled ``traceparent`` is always followed). Absent: ``OTEL_TRACES_SAMPLER_ARG``, else 1."""
    service_name: NonEmptyStr | None = None
    """``service.name`` of the spans. Absent: ``OTEL_SERVICE_NAME``, else ``clawplane``."""
    record_payloads: bool = False
    """Record tool arguments and results on spans, after redaction of every secret clawplane knows; off by default."""

    @field_validator("endpoint")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("Expected an http:// or https:// URL (OTLP/HTTP)")
        if parts.username or parts.password:
            raise ValueError("Expected no credentials in the URL: give them as headers with valueFrom")
        return value.strip()


class MetricExport(Model):
    """clawplane's Prometheus metrics, also pushed over OTLP/HTTP (protobuf) to the traces' collector."""

    export: bool | None = None
    """Export every metric ``/metrics`` serves to the collector of ``traces`` (its ``/v1/metrics``). Absent: on when ``OTEL_METRICS_EXPORTER`` names ``otlp`` (or, unset, when ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` is set); else off."""
    interval_seconds: Annotated[int, Field(ge=5, le=3600)] | None = None
    """Seconds between exports (5 to 3600). Absent: ``OTEL_METRIC_EXPORT_INTERVAL`` (milliseconds), else 60."""


class AuditSettings(Model):
    """The audit trail of tool calls through clawplane's endpoints."""

    enabled: bool = True
    """Record every tool call (who, which server and tool, when, outcome, duration; never arguments or results)."""
    max_records: Annotated[int, Field(ge=100, le=10_000_000)] = DEFAULT_AUDIT_RECORDS
    """Records kept; the oldest go first."""
    max_age_days: Annotated[int, Field(ge=1, le=3650)] = DEFAULT_AUDIT_DAYS
    """Days a record is kept."""
    export_logs: bool = False
    """Also export each record as an OTLP log record, to the traces' collector (its ``/v1/logs``)."""


class Observability(Model):
    """clawplane's own telemetry: traces, metrics over OTLP and the audit trail."""

    traces: TraceExport | None = None
    """Export traces (off when absent, unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set)."""
    metrics: MetricExport = Field(default_factory=MetricExport)
    """Export metrics over OTLP too, to the traces' endpoint and with their headers (off by default)."""
    audit: AuditSettings = Field(default_factory=AuditSettings)
    """The audit trail of tool calls."""
