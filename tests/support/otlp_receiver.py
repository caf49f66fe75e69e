"""A real OTLP/HTTP receiver on loopback: what a collector is sent, decoded with opentelemetry-proto.

``POST /v1/traces``, ``/v1/metrics`` (and ``/v1/logs``) with ``application/x-protobuf`` bodies are
answered 200 with an empty export response and kept raw (for byte searches) and decoded (spans,
and metric data points, with their attributes and resource). Runs in a thread, so a supervisor
in the same process or a child process can export to it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

__all__ = ["OtlpReceiver", "ReceivedPoint", "ReceivedSpan", "decode_metrics", "otlp_receiver"]

PATHS = ("/v1/traces", "/v1/metrics", "/v1/logs")
KINDS = {1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}


@dataclass(frozen=True)
class ReceivedSpan:
    """One exported span, as the collector decoded it."""

    name: str
    kind: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    status_code: int
    """0 unset, 1 ok, 2 error."""
    status_message: str
    resource: dict[str, Any]
    start_ns: int
    end_ns: int


@dataclass(frozen=True)
class ReceivedPoint:
    """One exported metric data point, with its metric's name, type and resource."""

    metric: str
    kind: str
    """``sum``, ``gauge``, ``histogram`` or ``summary``."""
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope: str
    description: str
    unit: str
    start_ns: int
    time_ns: int
    monotonic: bool = False
    temporality: int = 0
    """1 delta, 2 cumulative (sums and histograms)."""
    value: float | None = None
    """A sum's or a gauge's value."""
    count: int | None = None
    sum: float | None = None
    bounds: tuple[float, ...] = ()
    bucket_counts: tuple[int, ...] = ()


def decode_metrics(body: bytes) -> list[ReceivedPoint]:
    """Every data point of one ``ExportMetricsServiceRequest``."""
    request = ExportMetricsServiceRequest.FromString(body)
    found = []
    for rm in request.resource_metrics:
        resource = {kv.key: _value(kv.value) for kv in rm.resource.attributes}
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                data = getattr(m, kind)
                for p in data.data_points:
                    common: dict[str, Any] = {
                        "metric": m.name, "kind": kind, "resource": resource, "scope": sm.scope.name,
                        "attributes": {kv.key: _value(kv.value) for kv in p.attributes},
                        "description": m.description, "unit": m.unit,
                        "start_ns": p.start_time_unix_nano, "time_ns": p.time_unix_nano,
                    }  # fmt: skip
                    if kind in ("sum", "gauge"):
                        value = p.as_double if p.WhichOneof("value") == "as_double" else p.as_int
                        monotonic = kind == "sum" and m.sum.is_monotonic
                        temporality = m.sum.aggregation_temporality if kind == "sum" else 0
                        found.append(
                            ReceivedPoint(**common, value=value, monotonic=monotonic, temporality=temporality)
                        )
                    elif kind == "histogram":
                        found.append(
                            ReceivedPoint(
                                **common, temporality=m.histogram.aggregation_temporality, count=p.count,
                                sum=p.sum, bounds=tuple(p.explicit_bounds), bucket_counts=tuple(p.bucket_counts),
                            )
                        )  # fmt: skip
                    else:
                        found.append(ReceivedPoint(**common, count=p.count, sum=p.sum))
    return found


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return [_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, which) if which else None


@dataclass
class OtlpReceiver:
    """What was posted, in order; ``url`` is the traces endpoint."""

    base: str = ""
    bodies: list[tuple[str, bytes, dict[str, str]]] = field(default_factory=list)
    """(path, raw body, request headers) of every POST."""
    received: list[ReceivedSpan] = field(default_factory=list)
    exports: list[list[ReceivedPoint]] = field(default_factory=list)
    """The data points of each ``/v1/metrics`` POST, in order."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    defer: bool = False
    """Keep trace bodies raw as they arrive and decode them when ``spans()`` is asked (the bench's
    collector: decoding as spans arrive would take the CPU the measured proxy shares)."""

    @property
    def url(self) -> str:
        """The traces endpoint (``/v1/traces``)."""
        return self.base + "/v1/traces"

    def spans(self) -> list[ReceivedSpan]:
        """Every span received so far."""
        if self.defer:
            with self.lock:
                bodies = [body for path, body, _ in self.bodies if path == "/v1/traces"]
            return [span for body in bodies for span in _decode_spans(body)]
        with self.lock:
            return list(self.received)

    def metric_exports(self) -> list[list[ReceivedPoint]]:
        """The data points of every metrics export received so far (one list per POST)."""
        with self.lock:
            return list(self.exports)

    def wait_for_metrics(
        self, found: Callable[[list[list[ReceivedPoint]]], bool], timeout: float = 20.0
    ) -> list[list[ReceivedPoint]]:
        """Poll until ``found(exports)`` holds; the exports then (AssertionError at the deadline)."""
        deadline = time.monotonic() + timeout
        while True:
            exports = self.metric_exports()
            if found(exports):
                return exports
            if time.monotonic() > deadline:
                names = sorted({p.metric for e in exports for p in e})
                raise AssertionError(f"metric exports never matched; got {len(exports)}: {names}")
            time.sleep(0.05)

    def raw(self) -> bytes:
        """Every body received so far, concatenated (for byte searches)."""
        with self.lock:
            return b"".join(body for _, body, _ in self.bodies)

    def wait_for(
        self, found: Callable[[list[ReceivedSpan]], bool], timeout: float = 20.0
    ) -> list[ReceivedSpan]:
        """Poll until ``found(spans)`` holds; the spans then (AssertionError at the deadline)."""
        deadline = time.monotonic() + timeout
        while True:
            spans = self.spans()
            if found(spans):
                return spans
            if time.monotonic() > deadline:
                raise AssertionError(f"spans never matched; got {[(s.name, s.kind) for s in spans]}")
            time.sleep(0.05)

    def take(self, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        """Record one POST and return the export response's bytes."""
        with self.lock:
            self.bodies.append((path, body, headers))
        if path == "/v1/logs":
            ExportLogsServiceRequest.FromString(body)
            return bytes(ExportLogsServiceResponse().SerializeToString())
        if path == "/v1/metrics":
            points = decode_metrics(body)
            with self.lock:
                self.exports.append(points)
            return bytes(ExportMetricsServiceResponse().SerializeToString())
        if not self.defer:
            decoded = _decode_spans(body)
            with self.lock:
                self.received.extend(decoded)
        return bytes(ExportTraceServiceResponse().SerializeToString())


def _decode_spans(body: bytes) -> list[ReceivedSpan]:
    """The spans of one ``/v1/traces`` body."""
    request = ExportTraceServiceRequest.FromString(body)
    decoded = []
    for rs in request.resource_spans:
        resource = {kv.key: _value(kv.value) for kv in rs.resource.attributes}
        for ss in rs.scope_spans:
            for s in ss.spans:
                decoded.append(
                    ReceivedSpan(
                        name=s.name, kind=KINDS.get(s.kind, str(s.kind)), trace_id=s.trace_id.hex(),
                        span_id=s.span_id.hex(), parent_span_id=s.parent_span_id.hex(),
                        attributes={kv.key: _value(kv.value) for kv in s.attributes},
                        status_code=s.status.code, status_message=s.status.message, resource=resource,
                        start_ns=s.start_time_unix_nano, end_ns=s.end_time_unix_nano,
                    )
                )  # fmt: skip
    return decoded


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    """A receiver listening on 127.0.0.1 (a free port) until the block ends."""
    receiver = OtlpReceiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            if self.path not in PATHS or not self.headers.get("Content-Type", "").startswith(
                "application/x-protobuf"
            ):
                self.send_response(404 if self.path not in PATHS else 415)
                self.end_headers()
                return
            answer = receiver.take(self.path, body, {k.lower(): v for k, v in self.headers.items()})
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    """Serve as a collector of its own process (the benchmark's, so decoding costs it nothing):
    print the base URL, then on stdin's end print how many spans arrived and exit."""
    import sys

    with otlp_receiver() as receiver:
        receiver.defer = True
        print(receiver.base, flush=True)
        sys.stdin.read()
        print(len(receiver.spans()), flush=True)


if __name__ == "__main__":
    main()
