"""Which exports ``clawplane bridge`` flags and environment turn on: metrics follow the traces'
collector and headers, else the ``OTEL_*`` metrics endpoint; the flag wins over the environment."""

from __future__ import annotations

import pytest

from clawplane.cli.bridgetraces import MetricFlags, TraceFlags, bridge_exports

METRICS_URL = "http://127.0.0.1:4318/v1/metrics"


def test_the_environment_alone_turns_metric_export_on_and_the_flag_off() -> None:
    env = {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": METRICS_URL, "OTEL_METRIC_EXPORT_INTERVAL": "2500"}
    trace, metrics = bridge_exports(TraceFlags(), MetricFlags(), dict(env), SystemExit)
    assert trace is None and metrics is not None
    assert (metrics.endpoint, metrics.interval_s) == (METRICS_URL, 2.5)
    assert bridge_exports(TraceFlags(), MetricFlags(export=False), dict(env), SystemExit) == (None, None)
    _, flagged = bridge_exports(TraceFlags(), MetricFlags(interval_s=30), dict(env), SystemExit)
    assert flagged is not None and flagged.interval_s == 30


def test_metrics_go_to_the_traces_collector_with_its_header_whose_variable_leaves_the_environment() -> None:
    env = {"SOURCE": "Bearer s3cret-value"}
    flags = TraceFlags(endpoint="http://collector:4318/v1/traces", headers=("Authorization=SOURCE",))
    trace, metrics = bridge_exports(flags, MetricFlags(export=True), env, SystemExit)
    assert trace is not None and metrics is not None
    assert metrics.endpoint == "http://collector:4318/v1/metrics"
    assert dict(metrics.headers) == {"authorization": "Bearer s3cret-value"}
    assert "SOURCE" not in env  # the server the bridge starts inherits the rest


def test_export_without_a_collector_is_refused_only_when_the_flag_asked() -> None:
    def fail(text: str) -> SystemExit:
        return SystemExit(text)

    with pytest.raises(SystemExit, match="--metrics-export needs a collector"):
        bridge_exports(TraceFlags(), MetricFlags(export=True), {}, fail)
    warned: list[str] = []
    found = bridge_exports(
        TraceFlags(), MetricFlags(), {"OTEL_METRICS_EXPORTER": "otlp"}, fail, warned.append
    )
    assert found == (None, None)
    assert warned == [
        "metric export is on in the environment but no collector is set; metrics are not pushed"
    ]
