"""A folder's Gateway turns trace export on: ``clawplane run`` exports its passes and agents' calls.

The folder declares ``Gateway.spec.observability.traces`` pointing at a real loopback OTLP/HTTP
receiver, with an ``Authorization`` header by ``valueFrom``; the supervisor (``clawplane run
--detach``) exports each reconcile pass with its apply actions, and the calls made by a real SDK
client through ``/mcp/agents/<agent>``. A canary secret (a server's env, the header, a tool
argument) never appears in any exported byte, with ``recordPayloads`` on.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.fixtures.servers.helpers import script
from tests.integration.agentep.conftest import endpoint, token
from tests.integration.engine.conftest import Cli, processes_under
from tests.integration.telemetry.test_call_traces import CANARY, PARENT_ID, TRACE_ID, TRACEPARENT, encodings
from tests.support.otlp_receiver import OtlpReceiver, ReceivedSpan, otlp_receiver

pytestmark = pytest.mark.anyio

FOLDER = """apiVersion: clawplane.dev/v1alpha1
kind: Gateway
metadata: {{name: default}}
spec:
  observability:
    traces:
      endpoint: {endpoint}
      serviceName: folder-under-test
      recordPayloads: true
      headers:
        Authorization: {{valueFrom: {{env: TRACE_CANARY}}}}
---
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: fix}}
spec:
  command: {python}
  args: [{proxy}]
  env:
    FIXTURE_SECRET: {{valueFrom: {{env: TRACE_CANARY}}}}
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {{name: alpha}}
spec:
  mcpServers: [fix]
"""


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Cli, OtlpReceiver]]:
    """A folder with trace export declared, watched by ``clawplane run --detach``."""
    with otlp_receiver() as receiver:
        folder = tmp_path_factory.mktemp("traces") / "folder"
        folder.mkdir()
        text = FOLDER.format(
            endpoint=receiver.url, python=json.dumps(sys.executable), proxy=json.dumps(script("proxy"))
        )
        (folder / "resources.yaml").write_text(text)
        cli = Cli(folder)
        cli.env.update(TRACE_CANARY=CANARY, OTEL_BSP_SCHEDULE_DELAY="50")
        for name in (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_SDK_DISABLED",
        ):
            cli.env.pop(name, None)
        try:
            started = cli("run", str(folder), "--detach", "--resync-interval", "2")
            assert started.returncode == 0, started.stdout + started.stderr
            yield folder, cli, receiver
        finally:
            cli("down", str(folder))
            for proc in processes_under(folder):
                proc.kill()


def _pass_with_actions(spans: list[ReceivedSpan]) -> bool:
    passes = {s.span_id for s in spans if s.name == "reconcile"}
    return any(s.name.startswith("apply ") and s.parent_span_id in passes for s in spans)


def test_a_pass_is_a_span_with_a_child_per_action(running: tuple[Path, Cli, OtlpReceiver]) -> None:
    _, _, receiver = running
    spans = receiver.wait_for(_pass_with_actions)
    applied = next(
        s for s in spans if s.name == "reconcile" and any(c.parent_span_id == s.span_id for c in spans)
    )
    assert applied.attributes["clawplane.reconcile.trigger"] == "start"
    assert applied.attributes["clawplane.reconcile.result"] == "applied"
    assert applied.attributes["clawplane.reconcile.plan_size"] >= 3
    assert applied.attributes["clawplane.reconcile.duration_s"] > 0
    assert applied.resource["service.name"] == "folder-under-test"
    children = [s for s in spans if s.parent_span_id == applied.span_id]
    server = next(s for s in children if s.attributes["clawplane.resource.kind"] == "McpServer")
    assert server.name == "apply create McpServer"
    assert server.attributes["clawplane.resource.name"] == "fix"
    assert server.attributes["clawplane.action"] == "create"
    assert server.attributes["clawplane.outcome"] == "ok"
    # The header reached the collector, resolved from its valueFrom.
    assert {h.get("authorization") for _, _, h in receiver.bodies} == {CANARY}


async def test_an_agents_call_is_traced_and_no_secret_is_exported(
    running: tuple[Path, Cli, OtlpReceiver],
) -> None:
    folder, cli, receiver = running
    receiver.wait_for(_pass_with_actions)  # applied: the agent's token and route exist
    bearer = token(cli, folder, "agent:alpha")
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}", "traceparent": TRACEPARENT})
    url = f"{endpoint(folder)}/mcp/agents/alpha"
    async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30) as client:
        result = await client.call_tool("fix__echo", {"message": f"secret {CANARY}"})
    assert not result.is_error

    def echo(spans: list[ReceivedSpan]) -> list[ReceivedSpan]:
        return [s for s in spans if s.kind == "SERVER" and s.name == "tools/call echo"]

    def upstream(spans: list[ReceivedSpan]) -> bool:
        return any(s.kind == "CLIENT" and s.parent_span_id in {e.span_id for e in echo(spans)} for s in spans)

    spans = receiver.wait_for(upstream)
    server = echo(spans)[0]
    assert server.attributes["gen_ai.tool.name"] == "echo"
    assert server.attributes["clawplane.agent"] == "alpha"
    assert (server.trace_id, server.parent_span_id) == (TRACE_ID, PARENT_ID)
    assert server.attributes["clawplane.endpoint"] == "agent"
    assert server.attributes["clawplane.server"] == "fix"
    assert server.attributes["clawplane.consumer"] == "agent:alpha"
    # recordPayloads is on: the argument is recorded, the secret in it is not.
    assert server.attributes["gen_ai.tool.call.arguments"] == '{"message":"secret <redacted>"}'
    raw = receiver.raw()
    for form in encodings(CANARY):
        assert form not in raw, form
