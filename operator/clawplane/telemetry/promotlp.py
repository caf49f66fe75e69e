"""Prometheus metric families as OTLP metrics: what ``/metrics`` serves, in an OTLP export request.

The mapping follows OpenTelemetry's Prometheus compatibility specification (Prometheus to OTLP):
a counter is a monotonic cumulative Sum named without ``_total``; a gauge is a Gauge; a histogram
is a cumulative Histogram whose explicit bounds are its ``le`` buckets but ``+Inf``, with
per-bucket counts (Prometheus' are cumulative), its sum and count; a summary is a Summary; any
other family (info, stateset, unknown) is a Gauge per sample name. Labels are attributes. The
``_created`` samples are not sent: cumulative points start at ``start_ns`` instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import (
    AggregationTemporality,
    HistogramDataPoint,
    Metric,
    NumberDataPoint,
    SummaryDataPoint,
)

if TYPE_CHECKING:
    from prometheus_client import Metric as Family
    from prometheus_client.samples import Sample

__all__ = ["export_request"]

CUMULATIVE = AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
# UCUM units of the Prometheus base-unit suffixes clawplane's names use.
_UNITS = {"seconds": "s", "bytes": "By", "ratio": "1"}
Labels = tuple[tuple[str, str], ...]


def export_request(
    families: Iterable[Family],
    *,
    resource: Mapping[str, object],
    scope: tuple[str, str],
    start_ns: int,
    now_ns: int,
) -> ExportMetricsServiceRequest:
    """One export of ``families`` (a registry's ``collect()``), observed at ``now_ns``.

    ``resource`` holds the resource's attributes, ``scope`` the instrumentation scope's name and
    version; ``start_ns`` starts every cumulative point (when the counters started from zero).
    """
    request = ExportMetricsServiceRequest()
    found = request.resource_metrics.add()
    found.resource.attributes.extend(_attributes(resource.items()))
    scoped = found.scope_metrics.add()
    scoped.scope.name, scoped.scope.version = scope
    for family in families:
        for metric in _metrics(family, start_ns, now_ns):
            if _points(metric):
                scoped.metrics.append(metric)
    return request


def _metrics(family: Family, start_ns: int, now_ns: int) -> list[Metric]:
    if family.type == "counter":
        return [_counter(family, start_ns, now_ns)]
    if family.type == "gauge":
        return [_gauges(family, family.name, family.samples, now_ns)]
    if family.type == "histogram":
        return [_histogram(family, start_ns, now_ns)]
    if family.type == "summary":
        return [_summary(family, start_ns, now_ns)]
    by_name: dict[str, list[Sample]] = {}
    for sample in family.samples:
        by_name.setdefault(sample.name, []).append(sample)
    return [_gauges(family, name, samples, now_ns) for name, samples in by_name.items()]


def _metric(family: Family, name: str) -> Metric:
    unit = family.unit or next((u for u in _UNITS if name.endswith(f"_{u}")), "")
    return Metric(name=name, description=family.documentation, unit=_UNITS.get(unit, unit))


def _counter(family: Family, start_ns: int, now_ns: int) -> Metric:
    metric = _metric(family, family.name)
    metric.sum.aggregation_temporality = CUMULATIVE
    metric.sum.is_monotonic = True
    for sample in family.samples:
        if sample.name in (family.name, f"{family.name}_total"):
            metric.sum.data_points.append(_number(sample, now_ns, start_ns))
    return metric


def _gauges(family: Family, name: str, samples: Iterable[Sample], now_ns: int) -> Metric:
    metric = _metric(family, name)
    metric.gauge.data_points.extend(_number(s, now_ns) for s in samples if s.name == name)
    return metric


def _number(sample: Sample, now_ns: int, start_ns: int = 0) -> NumberDataPoint:
    point = NumberDataPoint(time_unix_nano=now_ns, start_time_unix_nano=start_ns, as_double=sample.value)
    point.attributes.extend(_attributes(sorted(sample.labels.items())))
    return point


def _series(family: Family, suffixes: tuple[str, ...], key: str) -> dict[Labels, dict[str, list[Sample]]]:
    """The samples of each series (its labels but ``key``), by suffix (``_bucket``, ``_sum``, ...)."""
    series: dict[Labels, dict[str, list[Sample]]] = {}
    for sample in family.samples:
        suffix = sample.name.removeprefix(family.name)
        if suffix in suffixes:
            labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k != key))
            series.setdefault(labels, {}).setdefault(suffix, []).append(sample)
    return series


def _histogram(family: Family, start_ns: int, now_ns: int) -> Metric:
    metric = _metric(family, family.name)
    metric.histogram.aggregation_temporality = CUMULATIVE
    for labels, parts in _series(family, ("_bucket", "_sum", "_count"), "le").items():
        buckets = sorted((float(s.labels["le"]), s.value) for s in parts.get("_bucket", []))
        counts = [round(value) for _, value in buckets]
        point = HistogramDataPoint(
            time_unix_nano=now_ns,
            start_time_unix_nano=start_ns,
            explicit_bounds=[bound for bound, _ in buckets if not math.isinf(bound)],
            # Prometheus counts each bucket with every one below it; OTLP counts it alone.
            bucket_counts=[n - below for n, below in zip(counts, [0, *counts[:-1]], strict=True)],
            count=round(_value(parts, "_count", counts[-1] if counts else 0)),
            sum=_value(parts, "_sum", 0.0),
        )
        point.attributes.extend(_attributes(labels))
        metric.histogram.data_points.append(point)
    return metric


def _summary(family: Family, start_ns: int, now_ns: int) -> Metric:
    metric = _metric(family, family.name)
    for labels, parts in _series(family, ("", "_sum", "_count"), "quantile").items():
        point = SummaryDataPoint(
            time_unix_nano=now_ns,
            start_time_unix_nano=start_ns,
            count=round(_value(parts, "_count", 0)),
            sum=_value(parts, "_sum", 0.0),
        )
        for sample in parts.get("", []):
            point.quantile_values.add(quantile=float(sample.labels["quantile"]), value=sample.value)
        point.attributes.extend(_attributes(labels))
        metric.summary.data_points.append(point)
    return metric


def _value(parts: Mapping[str, list[Sample]], suffix: str, default: float) -> float:
    found = parts.get(suffix)
    return found[0].value if found else default


def _points(metric: Metric) -> int:
    which = metric.WhichOneof("data")
    return len(getattr(metric, which).data_points) if which else 0


def _attributes(items: Iterable[tuple[str, object]]) -> list[KeyValue]:
    return [KeyValue(key=key, value=_any(value)) for key, value in items]


def _any(value: object) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, list | tuple):
        return AnyValue(array_value=ArrayValue(values=[_any(v) for v in value]))
    return AnyValue(string_value=str(value))
