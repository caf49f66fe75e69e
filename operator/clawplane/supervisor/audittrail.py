"""The supervisor's audit trail of tool calls: its recorder, and its OTLP logs export, as the Gateway says.

``Gateway.spec.observability.audit`` is followed from the moment the supervisor starts (the
last applied Gateway, from the state database) and after every apply that writes outputs
(``follow``). ``close`` writes what is still queued and flushes the export: a clean shutdown
loses nothing; SIGKILL loses what was queued and not yet written.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from clawplane.desired import DesiredState
from clawplane.models import AuditSettings, Gateway, Observability, TraceExport
from clawplane.state import AUDIT_BATCH, AUDIT_QUEUE_SIZE, CallAuditor, StateDB, StateError
from clawplane.telemetry import CallTelemetry, Tracing

if TYPE_CHECKING:
    from clawplane.telemetry import CallLogExport

__all__ = ["AuditTrail"]

log = logging.getLogger("clawplane.reconcile.daemon")


def applied_observability(db: StateDB) -> Observability:
    """The last applied Gateway's audit settings and traces collector (defaults without one, or if they
    cannot be read). Only those parts are read: the stored spec is redacted (trace headers are not
    values any more)."""
    try:
        rows = db.query("SELECT spec_json FROM resources WHERE kind = 'Gateway' ORDER BY key LIMIT 1")
        found = (json.loads(rows[0]["spec_json"]).get("observability") or {}) if rows else {}
        traces = found.get("traces")
        return Observability(
            audit=AuditSettings.model_validate(found.get("audit") or {}),
            traces=TraceExport.model_validate(
                {k: traces[k] for k in ("endpoint", "serviceName") if k in traces}
            )
            if isinstance(traces, dict)
            else None,
        )
    except (StateError, ValueError, AttributeError, TypeError) as exc:
        log.warning(
            "audit trail: cannot read the applied Gateway's audit settings (%s); using the defaults", exc
        )
    return Observability()


class AuditTrail:
    """Records every tool call ``telemetry`` sees in the folder's state database, and exports them."""

    def __init__(
        self,
        state_dir: Path,
        telemetry: CallTelemetry,
        *,
        tracing: Tracing | None = None,
        queue_size: int = AUDIT_QUEUE_SIZE,
        batch: int = AUDIT_BATCH,
    ) -> None:
        self.auditor = CallAuditor(state_dir, queue_size=queue_size, batch=batch)
        self._tracing = tracing
        """The trace export, whose resolved headers the log records carry to the same collector."""
        telemetry.add(self.auditor)
        self._export: CallLogExport | None = None
        self._settings: Observability | None = None

    def start(self, db: StateDB) -> None:
        """Follow the last applied Gateway and start writing.

        Raises:
            StateError: The state database cannot be opened by the writer.
        """
        self._apply(applied_observability(db))
        self.auditor.start()

    def follow(self, desired: DesiredState) -> None:
        """An apply wrote its outputs: follow its Gateway's settings from now on."""
        self._apply(_observability(desired.gateway))

    def retrace(self, _desired: DesiredState) -> None:
        """A pass configured the trace export: the log records take up its headers if they changed
        (the first pass after a start, whose stored Gateway had them redacted)."""
        if self._settings is not None:
            self._apply(self._settings)

    def _apply(self, settings: Observability) -> None:
        self._settings = settings
        audit = settings.audit
        endpoint = None
        if audit.enabled and audit.export_logs:
            from clawplane.telemetry import logs_endpoint

            traces = settings.traces.endpoint if settings.traces is not None else None
            endpoint = logs_endpoint(traces)
            if endpoint is None:
                log.warning(
                    "audit trail: exportLogs is on but no collector is set; set "
                    "spec.observability.traces.endpoint or OTEL_EXPORTER_OTLP_ENDPOINT"
                )
        service = settings.traces.service_name if settings.traces is not None else None
        headers = self._headers(endpoint)
        old = self._export
        if endpoint is None:
            self._export = None
        elif old is None or (old.endpoint, old.service_name, old.headers) != (endpoint, service, headers):
            from clawplane.telemetry import CallLogExport

            self._export = CallLogExport(endpoint, service_name=service, headers=dict(headers))
        self.auditor.configure(audit, self._export)
        if old is not None and old is not self._export:
            # Flushing may wait for a slow collector: never on the supervisor's event loop.
            threading.Thread(target=old.close, name="clawplane-log-export-close", daemon=True).start()

    def _headers(self, endpoint: str | None) -> tuple[tuple[str, str], ...]:
        """The trace export's headers (their ``valueFrom`` resolved) when its collector is this one;
        the stored Gateway has them redacted, so they are taken from the live trace export."""
        config = self._tracing.config if self._tracing is not None else None
        if endpoint is None or config is None:
            return ()
        from clawplane.telemetry import logs_endpoint

        return config.headers if logs_endpoint(config.endpoint) == endpoint else ()

    def close(self) -> None:
        """Write what is queued, then export what is pending."""
        self.auditor.close()
        if self._export is not None:
            self._export.close()
            self._export = None


def _observability(gateway: Gateway | None) -> Observability:
    return gateway.spec.observability if gateway is not None else Observability()
