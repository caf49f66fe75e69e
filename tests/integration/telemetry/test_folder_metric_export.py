"""A folder's Gateway turns metric export on: ``clawplane run`` pushes what ``/metrics`` serves over OTLP.

The folder declares ``Gateway.spec.observability.metrics.export`` and a traces collector (a real
loopback OTLP/HTTP receiver) with an ``Authorization`` header by ``valueFrom``; its supervisor
(``clawplane run --detach``, with ``OTEL_METRIC_EXPORT_INTERVAL`` at 200 ms so exports come
quickly) exports the registry, and a real SDK client's calls through ``/mcp/agents/alpha`` show
up as the request histogram. A canary secret (the header, a server's env) appears in no exported
byte and no log line. A collector that drops every connection costs one log line, never the
supervisor's service.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fixtures.servers.helpers import script
from tests.integration.agentep.conftest import agent_client
from tests.integration.engine.conftest import Cli, processes_under
from tests.integration.runloop.conftest import Loop, wait_for
from tests.integration.telemetry.test_call_traces import CANARY, encodings
from tests.integration.telemetry.test_folder_traces import _pass_with_actions
from tests.support.otlp_receiver import OtlpReceiver, ReceivedPoint, otlp_receiver

from clawplane import __version__
from clawplane.telemetry.metrics import DURATION_BUCKETS

pytestmark = pytest.mark.anyio

OBSERVABILITY = """  observability:
    traces:
      endpoint: {endpoint}
      serviceName: metrics-under-test
      headers:
        Authorization: {{valueFrom: {{env: METRIC_CANARY}}}}
    metrics: {{export: true}}
"""
FOLDER = """apiVersion: clawplane.dev/v1alpha1
kind: Gateway
metadata: {{name: default}}
spec:
{observability}---
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: fix}}
spec:
  command: {python}
  args: [{proxy}]
  env:
    FIXTURE_SECRET: {{valueFrom: {{env: METRIC_CANARY}}}}
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {{name: alpha}}
spec:
  mcpServers: [fix]
"""
CALLS = 3
OTEL_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_METRICS_EXPORTER",
    "OTEL_SDK_DISABLED",
)


def started(folder: Path, observability: str, **env: str) -> Cli:
    """``folder`` written with ``observability`` under its Gateway's spec, run with ``env``."""
    folder.mkdir(parents=True)
    text = FOLDER.format(
        observability=observability, python=json.dumps(sys.executable), proxy=json.dumps(script("proxy"))
    )
    (folder / "resources.yaml").write_text(text)
    cli = Cli(folder)
    for name in OTEL_VARIABLES:
        cli.env.pop(name, None)
    cli.env.update(
        METRIC_CANARY=CANARY, OTEL_METRIC_EXPORT_INTERVAL="200", OTEL_BSP_SCHEDULE_DELAY="50", **env
    )
    proc = cli("run", str(folder), "--detach", "--resync-interval", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return cli


def stop(folder: Path, cli: Cli) -> None:
    cli("down", str(folder))
    for proc in processes_under(folder):
        proc.kill()


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Cli, OtlpReceiver]]:
    """A folder with metric export declared, watched by ``clawplane run --detach``."""
    with otlp_receiver() as receiver:
        folder = tmp_path_factory.mktemp("metrics") / "folder"
        cli = started(folder, OBSERVABILITY.format(endpoint=receiver.url))
        try:
            yield folder, cli, receiver
        finally:
            stop(folder, cli)


def echo_calls(export: list[ReceivedPoint]) -> list[ReceivedPoint]:
    return [
        p
        for p in export
        if p.metric == "clawplane_mcp_request_duration_seconds"
        and p.attributes.get("endpoint") == "agent"
        and p.attributes.get("tool") == "echo"
    ]


async def test_calls_are_exported_as_the_request_histogram(running: tuple[Path, Cli, OtlpReceiver]) -> None:
    folder, cli, receiver = running
    receiver.wait_for(_pass_with_actions)  # applied: the agent's token and route exist
    async with agent_client(folder, cli, "alpha", mode="legacy") as client:
        for n in range(CALLS):
            result = await client.call_tool("fix__echo", {"message": f"call {n}"})
            assert not result.is_error

    def counted(exports: list[list[ReceivedPoint]]) -> bool:
        return bool(exports) and any(p.count == CALLS for p in echo_calls(exports[-1]))

    exports = receiver.wait_for_metrics(counted)
    (point,) = echo_calls(exports[-1])
    assert point.attributes == {
        "endpoint": "agent", "server": "fix", "method": "tools/call", "tool": "echo", "outcome": "ok",
    }  # fmt: skip
    assert (point.kind, point.temporality, point.unit) == ("histogram", 2, "s")
    assert point.bounds == tuple(float(b) for b in DURATION_BUCKETS)
    assert sum(point.bucket_counts) == CALLS and point.sum > 0
    assert point.resource["service.name"] == "metrics-under-test"
    assert point.resource["service.version"] == __version__
    # Every family /metrics serves, the loop's too; counters without their _total.
    names = {p.metric: p for p in exports[-1]}
    assert names["clawplane_reconciles"].kind == "sum" and names["clawplane_reconciles"].monotonic
    assert names["clawplane_mcp_sessions"].kind == "gauge"
    assert not any(name.endswith("_total") for name in names)
    # Cumulative points start when the supervisor did, in every export.
    assert len({p.start_ns for e in exports for p in e if p.kind != "gauge"}) == 1


def test_the_header_is_sent_and_no_secret_is_exported_or_logged(
    running: tuple[Path, Cli, OtlpReceiver],
) -> None:
    folder, _, receiver = running
    receiver.wait_for_metrics(lambda exports: len(exports) >= 2)
    metric_headers = [h for path, _, h in receiver.bodies if path == "/v1/metrics"]
    assert {h.get("authorization") for h in metric_headers} == {CANARY}  # resolved from valueFrom
    raw = receiver.raw()
    log = (folder / ".clawplane" / "supervisor.log").read_bytes()
    assert b"exporting metrics to " + receiver.base.encode() + b"/v1/metrics" in log
    for form in encodings(CANARY):
        assert form not in raw, form
        assert form not in log, form


class DroppingCollector:
    """A TCP listener on loopback that reads each request whole and closes the connection without an
    answer: a collector that is down (counted, so a test knows exports were tried)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1/metrics"
        self.tried = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn, contextlib.suppress(OSError):
                conn.settimeout(5)
                _read_request(conn)  # all of it: unread bytes would make the close a reset
            self.tried += 1

    def close(self) -> None:
        self.sock.close()
        self.thread.join(5)


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.lower().split(b"\r\n")
            if line.startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length and (chunk := conn.recv(65536)):
        body += chunk


async def test_a_dead_collector_costs_one_log_line_never_the_service(tmp_path: Path) -> None:
    collector = DroppingCollector()
    folder = tmp_path / "folder"
    # No Gateway setting: the environment's metrics endpoint alone turns the export on.
    cli = started(folder, "  {}\n", OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=collector.url)
    try:
        # Settled first: until the first pass has applied, the agent's token is not yet served.
        Loop(folder, cli).wait_settled()
        wait_for("three exports to be tried", lambda: collector.tried >= 3)
        async with agent_client(folder, cli, "alpha", mode="legacy") as client:
            result = await client.call_tool("fix__echo", {"message": "still served"})
        assert not result.is_error
        tried = collector.tried
        wait_for("more exports to be tried", lambda: collector.tried >= tried + 2)
        log = (folder / ".clawplane" / "supervisor.log").read_text()
    finally:
        stop(folder, cli)
        collector.close()
    failures = [line for line in log.splitlines() if "could not export metrics" in line]
    assert len(failures) == 1, failures
    assert f"could not export metrics to {collector.url} (" in failures[0]
    assert "(RemoteProtocolError: Server disconnected without sending a response.)" in failures[0]
    assert "Traceback" not in log


def test_an_edited_gateway_moves_the_export_to_its_new_collector(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    with otlp_receiver() as first, otlp_receiver() as second:
        cli = started(folder, OBSERVABILITY.format(endpoint=first.url))
        try:
            first.wait_for_metrics(lambda exports: len(exports) >= 1)
            resources = folder / "resources.yaml"
            resources.write_text(resources.read_text().replace(first.url, second.url))
            exports = second.wait_for_metrics(lambda exports: len(exports) >= 1)
            log = (folder / ".clawplane" / "supervisor.log").read_text()
        finally:
            stop(folder, cli)
    assert exports[0][0].resource["service.name"] == "metrics-under-test"
    assert f"exporting metrics to {second.base}/v1/metrics every 0.2s" in log
