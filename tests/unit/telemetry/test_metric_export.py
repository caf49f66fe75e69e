"""Metrics over OTLP: the Prometheus → OTLP mapping, the configuration, and the periodic exporter.

A real ``prometheus_client`` registry is observed, exported, and decoded by the loopback OTLP
receiver (``tests/support/otlp_receiver.py``) as a collector would; failures are exports to a
port nothing listens on.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Summary
from tests.support.otlp_receiver import ReceivedPoint, decode_metrics, otlp_receiver

from clawplane import __version__
from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Observability
from clawplane.secrets import KNOWN, SecretResolver
from clawplane.telemetry import MetricConfig, MetricExporter, metric_config
from clawplane.telemetry.metricexport import NoCollectorError, metrics_wanted
from clawplane.telemetry.promotlp import export_request
from clawplane.validation import validate_paths

SECRET = "metric-hdr-secret-Wq7Lx2Pz"
START, NOW = 1_700_000_000_000_000_000, 1_700_000_060_000_000_000


def observed() -> CollectorRegistry:
    """A registry with a labelled counter, gauge and histogram, and a summary, each observed."""
    registry = CollectorRegistry(auto_describe=True)
    calls = Counter("demo_calls", "Calls made", ["server", "outcome"], registry=registry)
    calls.labels("notes", "ok").inc(3)
    calls.labels("notes", "error").inc()
    sessions = Gauge("demo_sessions", "Sessions open", ["endpoint"], registry=registry)
    sessions.labels("hosted").set(2)
    sessions.labels("agent").set(0)
    durations = Histogram(
        "demo_duration_seconds", "How long", ["server"], buckets=(0.1, 1, 10), registry=registry
    )
    for value in (0.05, 0.5, 0.7, 5, 50):
        durations.labels("notes").observe(value)
    durations.labels("web").observe(0.2)
    Histogram("demo_unused_seconds", "Never observed", ["server"], registry=registry)  # no series
    Summary("demo_sizes_bytes", "Sizes", registry=registry).observe(100)
    return registry


def points(registry: CollectorRegistry) -> list[ReceivedPoint]:
    request = export_request(
        registry.collect(),
        resource={"service.name": "s"},
        scope=("clawplane", "1"),
        start_ns=START,
        now_ns=NOW,
    )
    return decode_metrics(request.SerializeToString())


def test_counters_are_monotonic_cumulative_sums_named_without_total() -> None:
    found = [p for p in points(observed()) if p.metric.startswith("demo_calls")]
    assert {(p.metric, p.kind, p.monotonic, p.temporality) for p in found} == {("demo_calls", "sum", True, 2)}
    assert {(tuple(sorted(p.attributes.items())), p.value) for p in found} == {
        ((("outcome", "ok"), ("server", "notes")), 3.0),
        ((("outcome", "error"), ("server", "notes")), 1.0),
    }
    assert {(p.start_ns, p.time_ns, p.description) for p in found} == {(START, NOW, "Calls made")}


def test_gauges_are_gauges_with_their_labels() -> None:
    found = [p for p in points(observed()) if p.metric == "demo_sessions"]
    assert {(p.kind, p.attributes["endpoint"], p.value) for p in found} == {
        ("gauge", "hosted", 2.0),
        ("gauge", "agent", 0.0),
    }
    assert {p.time_ns for p in found} == {NOW}


def test_histograms_carry_bounds_per_bucket_counts_sum_and_count() -> None:
    found = {p.attributes["server"]: p for p in points(observed()) if p.metric == "demo_duration_seconds"}
    notes = found["notes"]
    assert (notes.kind, notes.temporality, notes.unit, notes.start_ns) == ("histogram", 2, "s", START)
    assert notes.bounds == (0.1, 1.0, 10.0)
    # 0.05 | 0.5, 0.7 | 5 | 50: per bucket, the last one above 10 (Prometheus' +Inf).
    assert notes.bucket_counts == (1, 2, 1, 1)
    assert (notes.count, notes.sum) == (5, pytest.approx(56.25))
    assert found["web"].bucket_counts == (0, 1, 0, 0) and found["web"].count == 1
    # A labelled histogram nothing observed has no series: it is not exported.
    assert not any(p.metric == "demo_unused_seconds" for p in points(observed()))


def test_summaries_and_the_resource_and_scope() -> None:
    registry = observed()
    request = export_request(
        registry.collect(),
        resource={"service.name": "gw", "service.version": __version__},
        scope=("clawplane", __version__),
        start_ns=START,
        now_ns=NOW,
    )
    found = decode_metrics(request.SerializeToString())
    sizes = next(p for p in found if p.metric == "demo_sizes_bytes")
    assert (sizes.kind, sizes.count, sizes.sum, sizes.unit) == ("summary", 1, 100.0, "By")
    assert {(p.resource["service.name"], p.resource["service.version"], p.scope) for p in found} == {
        ("gw", __version__, "clawplane")
    }
    # _created samples are not sent as metrics of their own.
    assert not any(p.metric.endswith("_created") for p in found)


def test_off_by_default_and_the_gateway_wins_over_the_environment() -> None:
    off, on = Observability(), Observability.model_validate({"metrics": {"export": True}})
    declined = Observability.model_validate({"metrics": {"export": False}})
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}
    assert not metrics_wanted(off, {})
    assert not metrics_wanted(off, base)  # the base endpoint turns traces on, not metrics
    assert metrics_wanted(off, {**base, "OTEL_METRICS_EXPORTER": "prometheus, otlp"})
    assert metrics_wanted(off, {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m/v1/metrics"})
    assert not metrics_wanted(
        off, {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m", "OTEL_METRICS_EXPORTER": "none"}
    )
    assert metrics_wanted(on, {"OTEL_METRICS_EXPORTER": "none"})
    assert not metrics_wanted(declined, {**base, "OTEL_METRICS_EXPORTER": "otlp"})
    assert not metrics_wanted(on, {"OTEL_SDK_DISABLED": "true"})


def test_the_collector_is_the_traces_one_else_the_environments(tmp_path: Path) -> None:
    declared = Observability.model_validate(
        {
            "metrics": {"export": True, "intervalSeconds": 15},
            "traces": {
                "endpoint": "https://collector.example/otlp/v1/traces",
                "serviceName": "gw",
                "headers": {"Authorization": {"valueFrom": {"env": "METRIC_TOKEN"}}, "x-team": "blue"},
            },
        }
    )
    environ = {
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "x-tenant=acme",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://o",
    }
    resolver = SecretResolver({"METRIC_TOKEN": SECRET})
    config = metric_config(declared, environ, lambda v: resolver.resolve(v, base_dir=tmp_path))
    assert config == MetricConfig(
        endpoint="https://collector.example/otlp/v1/metrics",
        headers=(("authorization", SECRET), ("x-team", "blue"), ("x-tenant", "acme")),
        interval_s=15.0,
        service_name="gw",
    )
    assert SECRET not in repr(config)
    assert KNOWN.redactor()(f"{SECRET} blue") == "<redacted> blue"  # the credential, not plain values
    from_env = metric_config(
        Observability(),
        {
            "OTEL_METRICS_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/",
            "OTEL_SERVICE_NAME": "e",
        },
    )
    assert from_env == MetricConfig(endpoint="http://c:4318/v1/metrics", service_name="e")
    specific = {
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m:9/custom",
        "OTEL_METRIC_EXPORT_INTERVAL": "500",
    }
    assert metric_config(Observability(), specific) == MetricConfig(
        endpoint="http://m:9/custom", interval_s=0.5
    )
    nonsense = {**specific, "OTEL_METRIC_EXPORT_INTERVAL": "-3"}
    assert metric_config(Observability(), nonsense) == MetricConfig(endpoint="http://m:9/custom")


def test_export_on_without_a_collector_says_how_to_set_one() -> None:
    with pytest.raises(
        NoCollectorError, match=r"spec\.observability\.traces\.endpoint.*OTEL_EXPORTER_OTLP_ENDPOINT"
    ):
        metric_config(Observability.model_validate({"metrics": {"export": True}}), {})


@pytest.mark.parametrize("interval", [0, 4, 3601])
def test_the_interval_is_bounded(interval: int) -> None:
    with pytest.raises(ValueError, match=r"intervalSeconds|interval_seconds"):
        Observability.model_validate({"metrics": {"export": True, "intervalSeconds": interval}})


def test_the_exporter_sends_every_interval_with_one_start_time() -> None:
    registry = observed()
    counter = Counter("demo_ticks", "Ticks", registry=registry)
    exporter = MetricExporter(registry)
    with otlp_receiver() as receiver:
        # interval_s below the Gateway's 5 s floor: MetricConfig itself is not bounded.
        config = MetricConfig(
            endpoint=receiver.base + "/v1/metrics", headers=(("x-team", "blue"),), interval_s=0.05
        )
        exporter.configure(config)
        receiver.wait_for_metrics(lambda exports: len(exports) >= 2)
        counter.inc(7)

        def ticked(exports: list[list[ReceivedPoint]]) -> bool:
            return any(p.metric == "demo_ticks" and p.value == 7 for p in exports[-1])

        exports = receiver.wait_for_metrics(ticked)
        exporter.shutdown()
    assert len({p.start_ns for export in exports for p in export if p.kind != "gauge"}) == 1
    assert exports[-1][0].resource["service.name"] == "clawplane"
    assert {h.get("x-team") for path, _, h in receiver.bodies if path == "/v1/metrics"} == {"blue"}
    assert all(h["content-type"] == "application/x-protobuf" for _, _, h in receiver.bodies)


def test_shutdown_sends_a_last_export() -> None:
    registry = observed()
    counter = Counter("demo_ticks", "Ticks", registry=registry)
    exporter = MetricExporter(registry)
    with otlp_receiver() as receiver:
        exporter.configure(MetricConfig(endpoint=receiver.base + "/v1/metrics", interval_s=3600))
        counter.inc(3)
        assert receiver.metric_exports() == []  # nothing is due for an hour
        exporter.shutdown()
        exports = receiver.metric_exports()
    assert len(exports) == 1
    assert next(p.value for p in exports[0] if p.metric == "demo_ticks") == 3.0
    assert not any(t.name == "clawplane-metric-export" for t in threading.enumerate())


def test_turned_off_it_stops_sending() -> None:
    exporter = MetricExporter(observed())
    with otlp_receiver() as receiver:
        exporter.configure(MetricConfig(endpoint=receiver.base + "/v1/metrics", interval_s=0.05))
        receiver.wait_for_metrics(lambda exports: len(exports) >= 1)
        exporter.configure(None)
        deadline = time.monotonic() + 5
        while any(t.name == "clawplane-metric-export" for t in threading.enumerate()):
            assert time.monotonic() < deadline, "the export thread did not end"
            time.sleep(0.01)
        sent = len(receiver.metric_exports())
        exporter.shutdown()  # off: no last export
        assert len(receiver.metric_exports()) == sent


def test_a_dead_collector_is_logged_once_with_its_cause_and_never_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    KNOWN.add(SECRET)
    exporter = MetricExporter(observed())
    config = MetricConfig(
        endpoint=f"http://127.0.0.1:{port}/v1/metrics", headers=(("authorization", SECRET),)
    )
    exporter.configure(config)
    with caplog.at_level(logging.DEBUG):
        assert [exporter.export_now() for _ in range(3)] == [False, False, False]
        exporter.shutdown()
    failures = [r for r in caplog.records if "could not export metrics" in r.getMessage()]
    assert len(failures) == 1
    message = failures[0].getMessage()
    assert f"http://127.0.0.1:{port}/v1/metrics" in message
    assert "Connection refused" in message
    assert SECRET not in caplog.text


def test_a_refusing_collector_is_named_by_its_status(caplog: pytest.LogCaptureFixture) -> None:
    exporter = MetricExporter(observed())
    with otlp_receiver() as receiver, caplog.at_level(logging.WARNING):
        exporter.configure(MetricConfig(endpoint=receiver.base + "/v1/nothing-here"))
        assert not exporter.export_now()
        exporter.configure(MetricConfig(endpoint=receiver.base + "/v1/metrics"))
        assert exporter.export_now()
        exporter.shutdown()
    assert "(HTTP 404 Not Found)" in caplog.text
    assert exporter.exports == 2  # the one accepted, and the last at shutdown


GATEWAY = """apiVersion: clawplane.dev/v1alpha1
kind: Gateway
metadata: {{name: default}}
spec:
  observability:
{observability}
"""


def test_validate_warns_when_export_is_on_with_no_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)

    def found(observability: str) -> list[Diagnostic]:
        (tmp_path / "gw.yaml").write_text(GATEWAY.format(observability=observability))
        return [
            d for d in validate_paths([tmp_path]).diagnostics.sorted() if d.code == "metrics.no-collector"
        ]

    (warning,) = found("    metrics: {export: true}")
    assert warning.severity is Severity.WARNING
    assert warning.path == "spec.observability.metrics.export"
    assert "spec.observability.traces.endpoint" in warning.hint
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" in warning.hint
    # A traces block without an endpoint names no collector either.
    assert len(found("    metrics: {export: true}\n    traces: {serviceName: gw}")) == 1
    assert not found("    metrics: {export: true}\n    traces: {endpoint: 'http://127.0.0.1:4318/v1/traces'}")
    assert not found("    metrics: {export: false}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert not found("    metrics: {export: true}")
