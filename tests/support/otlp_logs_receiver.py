"""A real OTLP/HTTP logs receiver on loopback: decodes each ``/v1/logs`` POST as a collector would.

``logs_receiver()`` serves on a free 127.0.0.1 port in a thread and yields a ``LogsReceiver``
whose ``records`` are the decoded log records (``opentelemetry-proto``'s
``ExportLogsServiceRequest``), flattened with their resource's attributes. Other OTLP paths
(``/v1/traces``, ``/v1/metrics``) are answered 200 and kept undecoded, so a supervisor that
also exports traces to the same collector is not refused.
"""

from __future__ import annotations

import gzip
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
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def plain(value: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)


@dataclass
class LogsReceiver:
    """What the receiver got."""

    url: str
    """Its base URL (``http://127.0.0.1:PORT``)."""
    records: list[dict[str, Any]] = field(default_factory=list)
    """Every log record: ``body``, ``severity``, ``time_ns``, ``event_name``, ``attributes``, ``resource``."""
    other_paths: list[str] = field(default_factory=list)
    content_types: set[str] = field(default_factory=set)
    headers: list[dict[str, str]] = field(default_factory=list)
    """The request headers of each ``/v1/logs`` POST (names lower-cased)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(
        self, done: Callable[[list[dict[str, Any]]], bool], timeout: float = 30
    ) -> list[dict[str, Any]]:
        """The records once ``done(records)`` holds (polled; AssertionError at ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                seen = list(self.records)
            if done(seen):
                return seen
            if time.monotonic() > deadline:
                raise AssertionError(f"the receiver did not get what was expected; it has {seen}")
            time.sleep(0.05)


def _decode(body: bytes) -> list[dict[str, Any]]:
    request = ExportLogsServiceRequest()
    request.ParseFromString(body)
    found = []
    for resource_logs in request.resource_logs:
        resource = {a.key: plain(a.value) for a in resource_logs.resource.attributes}
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                found.append(
                    {
                        "body": plain(record.body),
                        "severity": record.severity_text,
                        "severity_number": record.severity_number,
                        "time_ns": record.time_unix_nano,
                        "event_name": record.event_name,
                        "scope": scope_logs.scope.name,
                        "attributes": {a.key: plain(a.value) for a in record.attributes},
                        "resource": resource,
                    }
                )
    return found


@contextmanager
def logs_receiver() -> Iterator[LogsReceiver]:
    """Serve an OTLP/HTTP receiver on a free loopback port until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    received = LogsReceiver(f"http://127.0.0.1:{server.server_address[1]}")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            with received.lock:
                received.content_types.add(self.headers.get("Content-Type") or "")
                if self.path == "/v1/logs":
                    received.records.extend(_decode(body))
                    received.headers.append({k.lower(): v for k, v in self.headers.items()})
                else:
                    received.other_paths.append(self.path)
            answer = ExportLogsServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server.RequestHandlerClass = Handler
    thread = threading.Thread(target=server.serve_forever, name="otlp-logs-receiver", daemon=True)
    thread.start()
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
