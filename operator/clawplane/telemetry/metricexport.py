"""Where metrics go besides ``/metrics``: a periodic OTLP/HTTP export of the supervisor's registry.

Off by default. ``Gateway.spec.observability.metrics.export`` turns it on (absent: the
environment's ``OTEL_METRICS_EXPORTER``, see ``metrics_wanted``); the collector is the traces'
(``traces.endpoint`` with ``/v1/traces`` made ``/v1/metrics``, else ``OTEL_*`` endpoints), with
the traces' headers. Every family the registry serves on ``/metrics`` is collected as it is
(nothing is instrumented twice) and mapped by ``promotlp``. A ``MetricExporter`` is one
supervisor's: a thread sends an export every interval, and once more when it shuts down; an
export waits at most ``EXPORT_TIMEOUT_S``, and a failure is logged at most once a minute with
its cause (never a header value), never raised.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from clawplane import __version__
from clawplane.models import Observability, SecretValue
from clawplane.secrets import redact
from clawplane.telemetry.otel import (
    DEFAULT_SERVICE,
    EXPORT_TIMEOUT_S,
    FAILURE_LOG_INTERVAL_S,
    export_headers,
    redact_endpoint,
    service_name,
    signal_endpoint,
)

if TYPE_CHECKING:  # httpx and the protobuf classes load once an export is due (a CLI start spares them)
    import httpx
    from prometheus_client import CollectorRegistry

__all__ = [
    "DEFAULT_INTERVAL_S",
    "MetricConfig",
    "MetricExporter",
    "NoCollectorError",
    "metric_config",
    "metrics_endpoint",
    "metrics_wanted",
]

logger = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 60.0
MAX_INTERVAL_S = 3600.0
MIN_ENV_INTERVAL_S = 0.1
"""The shortest interval ``OTEL_METRIC_EXPORT_INTERVAL`` may set (the Gateway's is 5 s at least)."""
_TRUE = frozenset({"true", "1", "yes", "on"})


@dataclass(frozen=True)
class MetricConfig:
    """Where and how often metrics are exported (header values never shown)."""

    endpoint: str
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    interval_s: float = DEFAULT_INTERVAL_S
    service_name: str = DEFAULT_SERVICE


class NoCollectorError(ValueError):
    """Metric export is on, but no collector URL is set anywhere."""


def metrics_wanted(observability: Observability, environ: Mapping[str, str]) -> bool:
    """Whether metrics are exported: the Gateway's ``metrics.export``; absent, ``OTEL_METRICS_EXPORTER``
    naming ``otlp`` (unset: whether ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` is); never with
    ``OTEL_SDK_DISABLED=true``."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return False
    if observability.metrics.export is not None:
        return observability.metrics.export
    exporters = environ.get("OTEL_METRICS_EXPORTER", "").strip().lower()
    if exporters:
        return "otlp" in {name.strip() for name in exporters.split(",")}
    # Unlike the SDK's default (otlp), clawplane's metrics are served on /metrics already: only a
    # metrics endpoint of their own says they should be pushed as well.
    return bool(environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip())


def metrics_endpoint(traces_endpoint: str | None, environ: Mapping[str, str]) -> str | None:
    """Where metrics go: the Gateway's traces URL with ``/traces`` made ``/metrics``, else
    ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``, else ``OTEL_EXPORTER_OTLP_ENDPOINT`` plus ``/v1/metrics``
    (None: nowhere)."""
    return signal_endpoint("metrics", traces_endpoint, environ)


def metric_config(
    observability: Observability,
    environ: Mapping[str, str],
    resolve: Callable[[SecretValue], str] | None = None,
) -> MetricConfig | None:
    """The configuration from the Gateway's ``observability`` and ``environ`` (None: export is off).

    ``resolve`` reads a traces header's ``valueFrom`` (the engine's secret resolver).

    Raises:
        NoCollectorError: Export is on and no collector URL is set.
        SecretError: A traces header's reference cannot be resolved (from ``resolve``).
    """
    if not metrics_wanted(observability, environ):
        return None
    traces = observability.traces
    endpoint = metrics_endpoint(traces.endpoint if traces is not None else None, environ)
    if endpoint is None:
        raise NoCollectorError(
            "metric export is on but no collector is set: set spec.observability.traces.endpoint "
            "(its /v1/traces becomes /v1/metrics), or OTEL_EXPORTER_OTLP_ENDPOINT or "
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT in the supervisor's environment"
        )
    declared = traces.headers if traces is not None else {}
    return MetricConfig(
        endpoint=endpoint,
        headers=export_headers(declared, environ, "METRICS", resolve),
        interval_s=_interval(observability.metrics.interval_seconds, environ),
        service_name=service_name(traces, environ),
    )


def _interval(declared: int | None, environ: Mapping[str, str]) -> float:
    if declared is not None:
        return float(declared)
    try:
        seconds = float(environ.get("OTEL_METRIC_EXPORT_INTERVAL", "")) / 1000
    except ValueError:
        return DEFAULT_INTERVAL_S
    if not MIN_ENV_INTERVAL_S <= seconds <= MAX_INTERVAL_S:  # also NaN
        return DEFAULT_INTERVAL_S
    return seconds


class MetricExporter:
    """Exports ``registry`` every interval while configured, and once more at ``shutdown``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry
        # Made with the registry's counters: their cumulative points start here.
        self._start_ns = time.time_ns()
        self._lock = threading.Condition()
        self._config: MetricConfig | None = None
        self._generation = 0
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._client: httpx.Client | None = None
        self._failures = 0
        self._last_logged = -FAILURE_LOG_INTERVAL_S
        self.exports = 0
        """Exports the collector accepted so far."""

    @property
    def config(self) -> MetricConfig | None:
        """The configuration in effect (None: off)."""
        return self._config

    def configure(self, config: MetricConfig | None) -> None:
        """Export per ``config`` from now on (None: stop); the interval starts again."""
        with self._lock:
            if config == self._config or self._stopping:
                return
            self._config = config
            self._generation += 1
            self._lock.notify_all()
            if config is not None and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="clawplane-metric-export")
                self._thread.daemon = True
                self._thread.start()
        if config is not None:
            logger.info(
                "exporting metrics to %s every %gs (service %s)",
                redact_endpoint(config.endpoint), config.interval_s, config.service_name,
            )  # fmt: skip
        else:
            logger.info("metric export is off")

    def _run(self) -> None:
        with self._lock:
            while True:
                config, generation = self._config, self._generation
                if self._stopping or config is None:
                    self._thread = None
                    return
                if self._lock.wait_for(partial(self._changed, generation), timeout=config.interval_s):
                    continue
                self._lock.release()
                try:
                    self._send(config)
                finally:
                    self._lock.acquire()

    def _changed(self, generation: int) -> bool:
        return self._stopping or self._generation != generation

    def export_now(self) -> bool:
        """Export once with the configuration in effect; whether the collector accepted it."""
        config = self._config
        return config is not None and self._send(config)

    def shutdown(self) -> None:
        """Stop the thread, then send a last export (the supervisor is leaving)."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
            thread, config = self._thread, self._config
        if thread is not None:
            thread.join(EXPORT_TIMEOUT_S + 1)  # an export under way ends within its timeout
        # Still sending (a collector slower than the timeout): that export is the last one.
        if config is not None and (thread is None or not thread.is_alive()):
            self._send(config)
        if self._client is not None:
            self._client.close()

    def _send(self, config: MetricConfig) -> bool:
        try:
            body = self._request(config)
            client = self._http()
            headers = {**dict(config.headers), "Content-Type": "application/x-protobuf"}
            response = client.post(config.endpoint, content=body, headers=headers)
        except Exception as exc:  # a collector's (or a collector's URL's) failure stays here
            why = _cause(exc)
        else:
            if response.is_success:
                self.exports += 1
                if self._failures:
                    logger.info("metric export to %s works again", redact_endpoint(config.endpoint))
                    self._failures, self._last_logged = 0, -FAILURE_LOG_INTERVAL_S
                return True
            why = f"HTTP {response.status_code} {response.reason_phrase}".strip()
        self._failures += 1
        now = time.monotonic()
        if now - self._last_logged >= FAILURE_LOG_INTERVAL_S:
            self._last_logged = now
            logger.warning(
                "could not export metrics to %s (%s); %d export(s) failed so far: check that the "
                "collector runs and accepts OTLP/HTTP protobuf, and its headers",
                redact_endpoint(config.endpoint), redact(why), self._failures,
            )  # fmt: skip
        return False

    def _request(self, config: MetricConfig) -> bytes:
        from opentelemetry.sdk.resources import Resource

        from clawplane.telemetry.promotlp import export_request

        # Resource.create adds OTEL_RESOURCE_ATTRIBUTES, as the traces' resource does.
        resource = Resource.create({"service.name": config.service_name, "service.version": __version__})
        request = export_request(
            self._registry.collect(),
            resource=dict(resource.attributes),
            scope=("clawplane", __version__),
            start_ns=self._start_ns,
            now_ns=time.time_ns(),
        )
        return bytes(request.SerializeToString())

    def _http(self) -> httpx.Client:
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=EXPORT_TIMEOUT_S)
        return self._client


def _cause(exc: BaseException) -> str:
    """What failed, in words (an OS error's, else a transport error's own), never a URL or header."""
    import httpx

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return f"{type(exc).__name__}: {seen.strerror}"
        seen = seen.__cause__ or seen.__context__
    # httpx's transport errors say what the connection did ("Server disconnected ..."), not where.
    said = str(exc).splitlines()[0][:200] if isinstance(exc, httpx.TransportError) and str(exc) else ""
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__
