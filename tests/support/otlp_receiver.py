"""A real OTLP/HTTP receiver on loopback: what a collector is sent, decoded with opentelemetry-proto.

``POST /v1/traces`` (and ``/v1/logs``) with ``application/x-protobuf`` bodies are answered 200
with an empty export response and kept raw (for byte searches) and decoded (spans with their
attributes and resource). Runs in a thread, so a supervisor in the same process or a child
process can export to it.
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
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

__all__ = ["OtlpReceiver", "ReceivedSpan", "otlp_receiver"]

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
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        """The traces endpoint (``/v1/traces``)."""
        return self.base + "/v1/traces"

    def spans(self) -> list[ReceivedSpan]:
        """Every span received so far."""
        with self.lock:
            return list(self.received)

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
        with self.lock:
            self.received.extend(decoded)
        return bytes(ExportTraceServiceResponse().SerializeToString())


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    """A receiver listening on 127.0.0.1 (a free port) until the block ends."""
    receiver = OtlpReceiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            if self.path not in ("/v1/traces", "/v1/logs") or not self.headers.get(
                "Content-Type", ""
            ).startswith("application/x-protobuf"):
                self.send_response(404 if self.path not in ("/v1/traces", "/v1/logs") else 415)
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
        print(receiver.base, flush=True)
        sys.stdin.read()
        print(len(receiver.spans()), flush=True)


if __name__ == "__main__":
    main()
