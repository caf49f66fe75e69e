"""Which audit settings the supervisor's trail follows: the applied Gateway's, from the start.

A real state database holds a Gateway as an apply stores it (its spec dumped by alias, then
redacted: a trace header given by ``valueFrom`` is no value any more); the trail a supervisor
starts with reads its audit settings and collector from there. Where logs go when ``exportLogs``
is on follows the traces' collector, then the OTLP environment variables.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clawplane.models import Gateway
from clawplane.state import ResourceRecord, StateDB, store
from clawplane.supervisor.audittrail import AuditTrail, applied_observability
from clawplane.telemetry import CallTelemetry
from clawplane.telemetry.logexport import logs_endpoint

GATEWAY = {
    "apiVersion": "clawplane.dev/v1alpha1",
    "kind": "Gateway",
    "metadata": {"name": "default"},
    "spec": {
        "observability": {
            "traces": {
                "endpoint": "http://127.0.0.1:4318/v1/traces",
                "headers": {"Authorization": {"valueFrom": {"env": "COLLECTOR_TOKEN"}}},
                "serviceName": "gw",
            },
            "audit": {"enabled": False, "maxRecords": 500, "maxAgeDays": 3, "exportLogs": True},
        }
    },
}


def store_gateway(db: StateDB) -> None:
    spec = Gateway.model_validate(GATEWAY).model_dump(mode="json", by_alias=True, exclude_none=True)["spec"]
    store.put_resource(db, ResourceRecord("Gateway/default", "Gateway", "default", "h", 1, 1, spec, "Ready"))


def test_the_applied_gateway_is_read_back_despite_its_redacted_headers(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    assert applied_observability(db).audit.enabled is True  # no Gateway yet: the defaults
    store_gateway(db)
    found = applied_observability(db)
    assert (
        found.audit.enabled,
        found.audit.max_records,
        found.audit.max_age_days,
        found.audit.export_logs,
    ) == (
        False,
        500,
        3,
        True,
    )
    assert found.traces is not None and found.traces.endpoint == "http://127.0.0.1:4318/v1/traces"
    assert found.traces.service_name == "gw"


def test_a_starting_supervisor_follows_the_applied_gateway(tmp_path: Path) -> None:
    db = StateDB.open(tmp_path)
    store_gateway(db)
    telemetry = CallTelemetry()
    trail = AuditTrail(tmp_path, telemetry)
    trail.start(db)
    try:
        assert telemetry.sinks == [trail.auditor]
        assert trail.auditor.enabled is False
    finally:
        trail.close()


@pytest.mark.parametrize(
    ("traces", "env", "expected"),
    [
        (
            "http://c:4318/v1/traces",
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318"},
            "http://c:4318/v1/logs",
        ),
        ("https://c.example/otlp/traces/", {}, "https://c.example/otlp/logs"),
        ("http://c:4318", {}, "http://c:4318/v1/logs"),
        (
            None,
            {
                "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://l:1/logs",
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://o",
            },
            "http://l:1/logs",
        ),
        (None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://o:4318/"}, "http://o:4318/v1/logs"),
        (None, {}, None),
    ],
)
def test_logs_go_to_the_traces_collector_else_the_environment(
    traces: str | None, env: dict[str, str], expected: str | None
) -> None:
    assert logs_endpoint(traces, env) == expected
