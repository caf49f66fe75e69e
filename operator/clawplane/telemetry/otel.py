"""Where traces go: the OpenTelemetry tracer provider, configured from the Gateway and ``OTEL_*``.

Tracing is off unless ``Gateway.spec.observability.traces`` is declared or an OTLP endpoint is
set in the environment (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_EXPORTER_OTLP_ENDPOINT``);
``OTEL_SDK_DISABLED=true`` turns it off whatever else says. The Gateway's values win over the
environment's. The engine's spans leave through the SDK's ``BatchSpanProcessor`` (a bounded
queue, a worker thread); the spans of proxied calls are written by the span worker and leave
through ``CallExport`` at the end of each of its batches. A slow or dead collector drops spans,
it never holds up a call. A ``Tracing`` is one supervisor's
switch: ``configure`` swaps the provider when the configuration changes, ``shutdown`` flushes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast
from urllib.parse import unquote, urlsplit, urlunsplit

from opentelemetry.trace import Tracer

from clawplane import __version__
from clawplane.models import SecretValue, TraceExport, is_reference
from clawplane.naming import is_sensitive_key
from clawplane.secrets import KNOWN, redact
from clawplane.telemetry import otlpwire
from clawplane.telemetry.spanwork import SpanWork

if TYPE_CHECKING:  # the SDK and the exporter load only once traces are on (a CLI start spares them)
    import httpx
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = [
    "TraceConfig",
    "Tracing",
    "export_headers",
    "parse_headers",
    "redact_endpoint",
    "service_name",
    "sibling_endpoint",
    "signal_endpoint",
    "trace_config",
]

logger = logging.getLogger(__name__)

DEFAULT_SERVICE = "clawplane"
DEFAULT_ENDPOINT = "http://localhost:4318/v1/traces"
EXPORT_TIMEOUT_S = 5.0
MAX_REQUEST_SPANS = 512
"""Spans of proxied calls in one export request at most (the SDK's batch size)."""
ENCODE_CHUNK = 16
"""Spans encoded between two offers of the interpreter lock (about a millisecond of work)."""
FAILURE_LOG_INTERVAL_S = 60.0
_TRUE = frozenset({"true", "1", "yes", "on"})


@dataclass(frozen=True)
class TraceConfig:
    """What one tracer provider exports, and where (header values never shown)."""

    endpoint: str
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    sample_ratio: float = 1.0
    service_name: str = DEFAULT_SERVICE
    record_payloads: bool = False


def trace_config(
    declared: TraceExport | None,
    environ: Mapping[str, str],
    resolve: Callable[[SecretValue], str] | None = None,
) -> TraceConfig | None:
    """The configuration from the Gateway's ``declared`` traces and ``environ`` (None: tracing is off).

    ``resolve`` reads a header's ``valueFrom`` (the engine's secret resolver).

    Raises:
        SecretError: A declared header's reference cannot be resolved (from ``resolve``).
    """
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return None
    from_env = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if not from_env and (base := environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()):
        from_env = base.rstrip("/") + "/v1/traces"
    if declared is None and not from_env:
        return None
    declared = declared or TraceExport()
    headers = export_headers(declared.headers, environ, "TRACES", resolve)
    return TraceConfig(
        endpoint=declared.endpoint or from_env or DEFAULT_ENDPOINT,
        headers=headers,
        sample_ratio=declared.sample_ratio if declared.sample_ratio is not None else _env_ratio(environ),
        service_name=service_name(declared, environ),
        record_payloads=declared.record_payloads,
    )


def export_headers(
    declared: Mapping[str, SecretValue],
    environ: Mapping[str, str],
    signal: str,
    resolve: Callable[[SecretValue], str] | None = None,
) -> tuple[tuple[str, str], ...]:
    """The headers of one signal's export (``signal``: ``TRACES``, ``METRICS``): those of
    ``OTEL_EXPORTER_OTLP_<signal>_HEADERS`` (else ``OTEL_EXPORTER_OTLP_HEADERS``) with the Gateway's
    ``declared`` ones over them; every secret value among them is registered for redaction.

    Raises:
        SecretError: A declared header's reference cannot be resolved (from ``resolve``).
    """
    headers = parse_headers(
        environ.get(f"OTEL_EXPORTER_OTLP_{signal}_HEADERS") or environ.get("OTEL_EXPORTER_OTLP_HEADERS", "")
    )
    secret = {name for name in headers if is_sensitive_key(name)}  # OTEL_*_HEADERS carry credentials
    for name, value in declared.items():
        headers[name.lower()] = resolve(value) if resolve is not None else str(value)
        if is_reference(value) or is_sensitive_key(name):
            secret.add(name.lower())
        else:
            secret.discard(name.lower())
    for name in secret:
        # Whatever quotes one (an error, a log line) has it redacted. Only secrets: a plain value
        # (``x-team: blue``) registered here would be redacted from every text of the process.
        KNOWN.add(headers[name])
        _scheme, space, credential = headers[name].strip().partition(" ")
        if space and credential.strip():  # ``Bearer <token>``: a message may quote the token alone
            KNOWN.add(credential.strip())
    return tuple(sorted(headers.items()))


def service_name(declared: TraceExport | None, environ: Mapping[str, str]) -> str:
    """``service.name`` of what is exported: the Gateway's, else ``OTEL_SERVICE_NAME``, else clawplane."""
    named = declared.service_name if declared is not None else None
    return named or environ.get("OTEL_SERVICE_NAME", "").strip() or DEFAULT_SERVICE


def sibling_endpoint(traces_endpoint: str, signal: str) -> str:
    """The collector's URL for ``signal`` (``logs``, ``metrics``) beside ``traces_endpoint``: its
    ``/traces`` made ``/<signal>``, else ``/v1/<signal>`` added to its path."""
    parts = urlsplit(traces_endpoint)
    path = parts.path.rstrip("/")
    path = path.removesuffix("/traces") + f"/{signal}" if path.endswith("/traces") else f"{path}/v1/{signal}"
    return urlunsplit(parts._replace(path=path))


def signal_endpoint(signal: str, traces_endpoint: str | None, environ: Mapping[str, str]) -> str | None:
    """Where ``signal`` (``logs``, ``metrics``) goes: beside the Gateway's ``traces_endpoint``, else
    ``OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT`` as is, else ``OTEL_EXPORTER_OTLP_ENDPOINT`` plus
    ``/v1/<signal>`` (None: nowhere)."""
    if traces_endpoint:
        return sibling_endpoint(traces_endpoint, signal)
    if found := environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "").strip():
        return found
    if base := environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip():
        return base.rstrip("/") + f"/v1/{signal}"
    return None


def parse_headers(text: str) -> dict[str, str]:
    """``OTEL_EXPORTER_OTLP_HEADERS`` (``key=value,key2=value2``, URL-encoded) as a dict."""
    found: dict[str, str] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        if sep and name.strip():
            found[unquote(name.strip()).lower()] = unquote(value.strip())
    return found


def redact_endpoint(url: str) -> str:
    """``url`` as logs may show it: scheme, host and path (no credentials, no query)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an invalid URL>"
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}"


_SAMPLER_RATIOS = {
    "always_on": 1.0,
    "parentbased_always_on": 1.0,
    "always_off": 0.0,
    "parentbased_always_off": 0.0,
}
"""``OTEL_TRACES_SAMPLER`` values of a fixed ratio; ``*traceidratio`` reads ``OTEL_TRACES_SAMPLER_ARG``."""


def _env_ratio(environ: Mapping[str, str]) -> float:
    """The sample ratio ``OTEL_TRACES_SAMPLER`` and ``OTEL_TRACES_SAMPLER_ARG`` ask for (1 by default).

    The sampler is always parent-based: a client's sampled ``traceparent`` is followed whatever
    the ratio (``always_off`` then means "only what a caller asked to sample"). Other samplers
    (``jaeger_remote``, ``xray``) are not supported and leave the ratio at 1.
    """
    sampler = environ.get("OTEL_TRACES_SAMPLER", "").strip().lower()
    if sampler in _SAMPLER_RATIOS:
        return _SAMPLER_RATIOS[sampler]
    try:
        ratio = float(environ.get("OTEL_TRACES_SAMPLER_ARG", "1"))
    except ValueError:
        return 1.0
    return ratio if 0.0 <= ratio <= 1.0 else 1.0


class _Exporter:
    """OTLP/HTTP protobuf export of span batches, gentle with the interpreter the proxy shares.

    The SDK's exporter encodes a whole batch (up to 512 spans, tens of milliseconds) in one go,
    holding the interpreter lock that long: the proxy's event loop, woken by a request meanwhile,
    waits up to the switch interval for it. Here a batch is encoded ``ENCODE_CHUNK`` spans at a
    time with the lock offered between chunks; the chunks' messages concatenate into one request
    (protobuf merges repeated fields). Failures are counted and logged at most once a minute,
    never with a header value; nothing is retried (a slow or dead collector drops spans).
    """

    def __init__(self, config: TraceConfig) -> None:
        self._config = config
        self._client: httpx.Client | None = None
        self._endpoint = config.endpoint
        self._where = redact_endpoint(config.endpoint)
        self._last_logged = 0.0
        self._dropped = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Send one batch of the SDK's spans (the engine's); a failure is counted and logged."""
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            parts = []
            for start in range(0, len(spans), ENCODE_CHUNK):
                parts.append(encode_spans(spans[start : start + ENCODE_CHUNK]).SerializePartialToString())
                time.sleep(0)  # offer the interpreter lock to the proxy between chunks
        except Exception as exc:  # a span the encoder refuses must not end the exporter's thread
            self._failed(len(spans), type(exc).__name__)
            return SpanExportResult.FAILURE
        ok = self.post(b"".join(parts), len(spans))
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def post(self, body: bytes, count: int) -> bool:
        """Send one encoded ``ExportTraceServiceRequest`` of ``count`` spans; False when it failed."""
        try:
            if self._client is None:  # made here: a header httpx refuses is a failure to log, not a crash
                import httpx

                headers = {**dict(self._config.headers), "Content-Type": "application/x-protobuf"}
                self._client = httpx.Client(headers=headers, timeout=EXPORT_TIMEOUT_S)
            response = self._client.post(self._endpoint, content=body)
        except Exception as exc:  # a collector's failure must stay in the exporter's thread
            self._failed(count, type(exc).__name__)
            return False
        if not response.is_success:
            self._failed(count, f"HTTP {response.status_code}")
            return False
        return True

    def _failed(self, count: int, why: str) -> None:
        self._dropped += count
        now = time.monotonic()
        if now - self._last_logged >= FAILURE_LOG_INTERVAL_S:
            self._last_logged = now
            logger.warning(
                "could not export traces to %s (%s); %d span(s) dropped so far: check that the "
                "collector runs and accepts OTLP/HTTP protobuf, and its headers",
                self._where, why, self._dropped,
            )  # fmt: skip

    def shutdown(self) -> None:
        """Close the HTTP connections."""
        if self._client is not None:
            self._client.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered here (the batch processor buffers)."""
        return True


class CallExport:
    """Where the spans of proxied calls go under one configuration: written on the span worker
    (``tracing.CallSpans``), they wait here until the worker's batch ends, then leave together."""

    def __init__(self, resource: Mapping[str, str | bool | int | float], exporter: _Exporter, work: SpanWork):
        self._resource = resource
        self._exporter = exporter
        self._work = work
        self._pending: list[bytes] = []

    def add(self, spans: list[bytes]) -> None:
        """Queue written spans (on the span worker); they leave when its batch ends."""
        if not self._pending:
            self._work.after_batch(self.send)
        self._pending.extend(spans)

    def send(self) -> None:
        """Export what is queued, ``MAX_REQUEST_SPANS`` at a time."""
        pending, self._pending = self._pending, []
        for start in range(0, len(pending), MAX_REQUEST_SPANS):
            chunk = pending[start : start + MAX_REQUEST_SPANS]
            self._exporter.post(
                otlpwire.export_request(self._resource, "clawplane", __version__, chunk), len(chunk)
            )

    def close(self) -> None:
        """Close the exporter's connections (after the worker drained)."""
        self._exporter.shutdown()


class _Quiet(logging.Filter):
    """Lets the OTLP exporter's own messages through once a minute (a dead collector repeats them),
    with every secret this process resolved (the export headers among them) redacted."""

    def __init__(self) -> None:
        super().__init__()
        self._last = 0.0

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep one record a minute, redacted."""
        now = time.monotonic()
        if now - self._last < FAILURE_LOG_INTERVAL_S:
            return False
        self._last = now
        record.msg, record.args = redact(record.getMessage()), ()
        return True


for _name in (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http._common",
    "opentelemetry.exporter.otlp.common.http",
):
    logging.getLogger(_name).addFilter(_Quiet())


class Tracing:
    """One process's traces: the provider for the current configuration, or none (off)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._config: TraceConfig | None = None
        self._provider: TracerProvider | None = None
        self._tracer: Tracer | None = None
        self.work = SpanWork()
        """Where finished calls' spans are made, off the event loop."""
        self._calls: CallExport | None = None

    @property
    def tracer(self) -> Tracer | None:
        """The tracer spans start from now (None: tracing is off)."""
        return self._tracer

    @property
    def calls(self) -> CallExport | None:
        """Where the spans of proxied calls go now (None: tracing is off)."""
        return self._calls

    @property
    def config(self) -> TraceConfig | None:
        """The configuration in effect (None: off)."""
        return self._config

    @property
    def record_payloads(self) -> bool:
        """Whether spans carry redacted tool arguments and results."""
        return self._config is not None and self._config.record_payloads

    def samples(self, trace_id: int) -> bool:
        """Whether a new root trace ``trace_id`` is sampled (the ratio's rule, as the SDK applies it)."""
        config = self._config
        if config is None:
            return False
        # TraceIdRatioBased: the trace id's low 64 bits under ratio × 2^64.
        return (trace_id & 0xFFFFFFFFFFFFFFFF) < round(config.sample_ratio * (1 << 64))

    def configure(self, config: TraceConfig | None) -> None:
        """Export per ``config`` from now on (None: stop); the previous provider flushes in the background."""
        with self._lock:
            if config == self._config:
                return
            old = self._provider
            # A call begun under the old configuration still sends its spans there (CallSpans kept it).
            self._config, self._provider, self._tracer, self._calls = config, None, None, None
            if config is not None:
                self._provider = _provider(config)
                self._tracer = self._provider.get_tracer("clawplane", __version__)
                resource = {
                    k: v
                    for k, v in self._provider.resource.attributes.items()
                    if isinstance(v, str | bool | int | float)
                }
                self._calls = CallExport(resource, _Exporter(config), self.work)
                logger.info(
                    "exporting traces to %s (service %s, sample ratio %g)",
                    redact_endpoint(config.endpoint), config.service_name, config.sample_ratio,
                )  # fmt: skip
            elif old is not None:
                logger.info("trace export is off")
        if old is not None:  # its last batch goes out without holding up the caller
            threading.Thread(target=old.shutdown, name="clawplane-traces-old", daemon=True).start()

    def flush(self) -> None:
        """Make the spans of every call finished so far and export what is queued."""
        self.work.drain()
        provider = self._provider
        if provider is not None:
            provider.force_flush()

    def shutdown(self) -> None:
        """Flush what is queued and stop exporting (the supervisor is leaving)."""
        self.work.drain()
        with self._lock:
            provider, self._provider, self._tracer, self._config = self._provider, None, None, None
            calls, self._calls = self._calls, None
        if calls is not None:
            calls.close()
        if provider is not None:
            provider.shutdown()


def _provider(config: TraceConfig) -> TracerProvider:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    resource = Resource.create({"service.name": config.service_name, "service.version": __version__})
    sampler = ParentBased(TraceIdRatioBased(config.sample_ratio))
    provider = TracerProvider(resource=resource, sampler=sampler)
    # Queue and batch sizes and delays come from OTEL_BSP_* (the SDK's defaults: 2048 spans queued).
    provider.add_span_processor(BatchSpanProcessor(cast("SpanExporter", _Exporter(config))))
    return provider
