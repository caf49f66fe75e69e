"""``clawplane bridge --metrics-export`` pushes what its ``/metrics`` serves over OTLP, as the folder
supervisor does.

A real bridge process serves the real stdio proxy fixture; a real SDK client calls through it;
the metric exports go to the real loopback OTLP receiver at the traces' collector (``/v1/metrics``
beside ``--traces-endpoint``) with the header ``--trace-header`` names, which the server never
sees. The interval comes from ``OTEL_METRIC_EXPORT_INTERVAL`` (200 ms), and a last export is sent
as the bridge exits. A canary secret is in no exported byte and no output.
"""

from __future__ import annotations

import sys
from subprocess import PIPE

import anyio
import pytest
from tests.fixtures.servers.helpers import CLAWPLANE, bridge_process, script
from tests.integration.telemetry.test_bridge_traces import assert_no_canary, call, environment, stop
from tests.integration.telemetry.test_call_traces import CANARY
from tests.support.otlp_receiver import ReceivedPoint, otlp_receiver

pytestmark = pytest.mark.anyio


def echo_points(export: list[ReceivedPoint]) -> list[ReceivedPoint]:
    return [
        p
        for p in export
        if p.metric == "clawplane_mcp_request_duration_seconds" and p.attributes.get("tool") == "echo"
    ]


async def test_the_bridge_pushes_its_metrics_to_the_traces_collector_with_its_header() -> None:
    with otlp_receiver() as receiver:
        env = environment(TRACE_HEADER_SOURCE=CANARY, OTEL_METRIC_EXPORT_INTERVAL="200")
        args = [
            "--name", "notes", "--traces-endpoint", receiver.url, "--service-name", "ns-gateway",
            "--trace-header", "Authorization=TRACE_HEADER_SOURCE", "--metrics-export",
        ]  # fmt: skip
        async with bridge_process(sys.executable, script("proxy"), env=env, args=args, stdout=PIPE) as (
            bridge,
            url,
        ):
            assert await call(url, echo={"message": "one"}) == {"echo": False}
            during = receiver.wait_for_metrics(lambda exports: any(echo_points(e) for e in exports))
            assert await call(url, echo={"message": "two"}) == {"echo": False}
            code, out, err = await stop(bridge)
        assert code == 0, err
    (point,) = echo_points(during[-1])
    assert point.attributes == {
        "endpoint": "hosted", "server": "notes", "method": "tools/call", "tool": "echo", "outcome": "ok",
    }  # fmt: skip
    assert point.kind == "histogram" and point.count == 1
    assert point.resource["service.name"] == "ns-gateway"
    # The export sent as the bridge ended counts the call made after the last interval's.
    (last,) = echo_points(receiver.metric_exports()[-1])
    assert last.count == 2
    metric_posts = [h for path, _, h in receiver.bodies if path == "/v1/metrics"]
    assert metric_posts and {h.get("authorization") for h in metric_posts} == {CANARY}
    assert_no_canary(receiver, out, err)


async def test_metrics_export_without_a_collector_is_a_usage_error() -> None:
    argv = [*CLAWPLANE, "bridge", "--port", "0", "--metrics-export", "--", sys.executable, script("proxy")]
    done = await anyio.run_process(argv, env=environment(CLAWPLANE_BRIDGE_TOKEN="t" * 32), check=False)
    text = done.stderr.decode()
    assert done.returncode == 2, text
    assert "--metrics-export needs a collector: give --traces-endpoint" in text
    assert "Traceback" not in text
    bad = [*CLAWPLANE, "bridge", "--port", "0", "--metrics-interval", "1", "--traces-endpoint",
           "http://127.0.0.1:9/v1/traces", "--metrics-export", "--", sys.executable, script("proxy")]  # fmt: skip
    refused = await anyio.run_process(bad, env=environment(CLAWPLANE_BRIDGE_TOKEN="t" * 32), check=False)
    assert refused.returncode == 2 and "--metrics-interval:" in refused.stderr.decode()
