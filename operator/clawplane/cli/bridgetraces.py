"""Where ``clawplane bridge`` sends its spans and metrics: its flags over the ``OTEL_*`` environment.

The flags play the part the Gateway's ``spec.observability.traces`` plays for the supervisor (the
Kubernetes operator renders them into each bridge pod from the namespace's Gateway), so the same
``trace_config`` decides: flags win over ``OTEL_*``, ``OTEL_SDK_DISABLED=true`` turns export off.
A header's value is never a flag (command lines are world-readable in ``/proc``): ``--trace-header
NAME=VAR`` names an environment variable, which the bridge reads and then removes from the
environment the server inherits: the server is not handed the collector's credentials (nor can it
read the bridge's initial environment in ``/proc``: the bridge is non-dumpable). Metrics
(``--metrics-export``) go to the traces' collector with its headers, as the supervisor's do.
Nothing of OpenTelemetry is imported unless a flag or the environment turns an export on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

    from clawplane.models import SecretValue
    from clawplane.telemetry import MetricConfig, TraceConfig

__all__ = ["MetricFlags", "TraceFlags", "bridge_exports", "bridge_trace_config"]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_ENDPOINT_ENV = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


@dataclass(frozen=True, slots=True)
class TraceFlags:
    """The bridge's trace flags as given (None or empty: not given)."""

    endpoint: str | None = None
    headers: tuple[str, ...] = ()
    """``NAME=VAR`` pairs."""
    service_name: str | None = None
    sample_ratio: float | None = None
    record_payloads: bool = False

    @property
    def given(self) -> bool:
        """Whether any flag asks for traces."""
        return bool(self.endpoint or self.headers or self.service_name or self.record_payloads) or (
            self.sample_ratio is not None
        )


@dataclass(frozen=True, slots=True)
class MetricFlags:
    """The bridge's metric export flags as given (None: not given)."""

    export: bool | None = None
    interval_s: int | None = None


def bridge_trace_config(
    flags: TraceFlags,
    environ: MutableMapping[str, str],
    fail: Callable[[str], typer.Exit],
    warn: Callable[[str], None] = lambda _text: None,
) -> TraceConfig | None:
    """The trace export ``flags`` and ``environ`` ask for (None: off); header variables leave ``environ``."""
    return bridge_exports(flags, MetricFlags(), environ, fail, warn)[0]


def bridge_exports(
    flags: TraceFlags,
    metrics: MetricFlags,
    environ: MutableMapping[str, str],
    fail: Callable[[str], typer.Exit],
    warn: Callable[[str], None] = lambda _text: None,
) -> tuple[TraceConfig | None, MetricConfig | None]:
    """The trace and metric exports the flags and ``environ`` ask for (None: off); header variables
    leave ``environ``.

    ``fail`` makes the usage error raised for a malformed flag. A header whose variable is not set
    is not sent, and ``warn`` says so: in a pod it comes from an optional Secret key, and a Secret
    not there yet must cost the collector's header, not the server (the pod rolls when it appears).
    Metrics go where the supervisor's go: the traces' collector (its ``/v1/metrics``), with the
    traces' headers, else the ``OTEL_*`` metrics endpoint.
    """
    traced = flags.given or any(environ.get(name, "").strip() for name in _ENDPOINT_ENV)
    if not traced and not _metrics_asked(metrics, environ):
        return None, None
    from pydantic import ValidationError

    from clawplane.models import MetricExport, Observability, TraceExport, ValueFrom
    from clawplane.telemetry import metric_config, trace_config
    from clawplane.telemetry.metricexport import NoCollectorError

    headers: dict[str, ValueFrom] = {}
    for pair in flags.headers:
        name, sep, var = pair.partition("=")
        name, var = name.strip(), var.strip()
        if not sep or not _HEADER_NAME.match(name) or not _ENV_NAME.match(var):
            raise fail(f"--trace-header {pair!r} is not NAME=VAR (a header name, an environment variable)")
        if not environ.get(var, "").strip():
            warn(
                f"--trace-header {name}: environment variable {var} is not set, so the header is not sent; "
                "set it to the header's value (in Kubernetes: create the Secret the Gateway names)"
            )
            continue
        headers[name] = ValueFrom.model_validate({"valueFrom": {"env": var}})
    declared = None
    if flags.given:
        try:
            declared = TraceExport(
                endpoint=flags.endpoint,
                headers=headers,
                sample_ratio=flags.sample_ratio,
                service_name=flags.service_name,
                record_payloads=flags.record_payloads,
            )
        except ValidationError as exc:
            problems = "; ".join(str(e["msg"]) for e in exc.errors())
            raise fail(f"--traces-endpoint / --service-name: {problems}") from None

    def resolve(value: SecretValue) -> str:
        assert isinstance(value, ValueFrom) and value.value_from.env is not None
        return environ[value.value_from.env].strip()

    trace = trace_config(declared, environ, resolve) if traced else None
    try:
        wanted = MetricExport(export=metrics.export, interval_seconds=metrics.interval_s)
        metric = metric_config(Observability(traces=declared, metrics=wanted), environ, resolve)
    except ValidationError as exc:
        problems = "; ".join(str(e["msg"]) for e in exc.errors())
        raise fail(f"--metrics-interval: {problems}") from None
    except NoCollectorError:
        if metrics.export:
            raise fail(
                "--metrics-export needs a collector: give --traces-endpoint (its /v1/traces becomes "
                "/v1/metrics) or set OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
            ) from None
        warn("metric export is on in the environment but no collector is set; metrics are not pushed")
        metric = None
    for value in headers.values():  # the server the bridge starts inherits its environment: not these
        environ.pop(value.value_from.env or "", None)
    return trace, metric


def _metrics_asked(flags: MetricFlags, environ: Mapping[str, str]) -> bool:
    """Whether metric export may be on (``metric_config`` decides), without importing anything."""
    if flags.export is not None:
        return flags.export
    return any(
        environ.get(name, "").strip()
        for name in ("OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
    )
