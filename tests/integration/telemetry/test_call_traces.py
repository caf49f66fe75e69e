"""Every request through the hosted endpoint becomes OpenTelemetry spans, exported to a real collector.

Real SDK clients (both protocol eras) call a real stdio fixture server through the proxy; the
spans are exported over OTLP/HTTP protobuf to a loopback receiver that decodes them with
opentelemetry-proto (``tests.support.otlp_receiver``).
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, TOKEN, guard, stdio_spec
from tests.support.otlp_receiver import OtlpReceiver, ReceivedSpan, otlp_receiver

from clawplane.runtimes import Phase, Supervisor
from clawplane.secrets import KNOWN
from clawplane.telemetry import CallSpans, CallTelemetry, TraceConfig, Tracing

pytestmark = pytest.mark.anyio
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
CANARY = "trace-canary-Zq8vW3xYk2"


def encodings(secret: str) -> list[bytes]:
    """The forms a secret could take in an export: raw, base64, hex, URL-encoded."""
    raw = secret.encode()
    return [raw, base64.b64encode(raw), raw.hex().encode(), urllib.parse.quote(secret).encode()]


@asynccontextmanager
async def client(url: str, mode: str, **headers: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}", **headers}, timeout=30)
    async with Client(streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=30) as c:
        yield c


@asynccontextmanager
async def traced(
    tmp_path: Path, receiver: OtlpReceiver | None, *, payloads: bool = False, ratio: float = 1.0
) -> AsyncIterator[str]:
    """A supervisor hosting the proxy fixture, its calls traced to ``receiver`` (None: tracing off)
    with ``ratio`` of new traces sampled; yields the server URL."""
    tracing = Tracing()
    if receiver is not None:
        tracing.configure(TraceConfig(endpoint=receiver.url, record_payloads=payloads, sample_ratio=ratio))
    telemetry = CallTelemetry([CallSpans(tracing)])
    spec = stdio_spec("proxy", env={"FIXTURE_SECRET": {"valueFrom": {"env": "TRACE_CANARY"}}})
    try:
        async with Supervisor(settings=replace(FAST, telemetry=telemetry)) as supervisor:
            await supervisor.ensure("proxy", spec, config_hash="h", base_dir=tmp_path)
            await supervisor.wait_until("proxy", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
            endpoint = await supervisor.expose(guard())
            yield endpoint.url("proxy")
    finally:
        tracing.shutdown()  # flushes what is queued


@pytest.fixture(autouse=True)
def _fast_export(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    monkeypatch.setenv("TRACE_CANARY", CANARY)


def named(spans: list[ReceivedSpan], name: str, kind: str) -> list[ReceivedSpan]:
    return [s for s in spans if s.name == name and s.kind == kind]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_tool_call_is_a_server_span_under_the_clients_trace_with_a_client_child(
    tmp_path: Path, mode: str
) -> None:
    with otlp_receiver() as receiver:
        async with traced(tmp_path, receiver) as url, client(url, mode, traceparent=TRACEPARENT) as c:
            await c.call_tool("echo", {"message": "hello"})
            with pytest.raises(MCPError):
                await c.call_tool("fail_with_data", {"message": "says no"})
        spans = receiver.spans()
    server = named(spans, "tools/call echo", "SERVER")
    assert len(server) == 1, spans
    span = server[0]
    assert (span.trace_id, span.parent_span_id) == (TRACE_ID, PARENT_ID)
    revision = "2026-07-28" if mode == "auto" else "2025-11-25"
    expected = {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": revision,
        "network.transport": "tcp",
        "clawplane.endpoint": "hosted",
        "clawplane.server": "proxy",
        "clawplane.consumer": "test",
        "clawplane.outcome": "ok",
    }
    assert expected.items() <= span.attributes.items()
    assert span.attributes["jsonrpc.request.id"]
    assert span.attributes["clawplane.request.bytes"] > 0
    assert ("mcp.session.id" in span.attributes) == (mode == "legacy")
    assert span.resource["service.name"] == "clawplane"
    upstream = [s for s in named(spans, "tools/call echo", "CLIENT") if s.parent_span_id == span.span_id]
    assert len(upstream) == 1 and upstream[0].trace_id == TRACE_ID
    assert span.start_ns <= upstream[0].start_ns <= upstream[0].end_ns <= span.end_ns
    # A JSON-RPC error: error.type and the status code, span status ERROR.
    failed = named(spans, "tools/call fail_with_data", "SERVER")[0]
    assert failed.attributes["error.type"] == "-32050"
    assert failed.attributes["rpc.response.status_code"] == "-32050"
    assert failed.attributes["clawplane.outcome"] == "error" and failed.status_code == 2
    # Arguments and results are not recorded by default.
    assert not any("gen_ai.tool.call.arguments" in s.attributes for s in spans)
    assert b"hello" not in receiver.raw()


async def test_the_requests_own_meta_traceparent_wins_over_the_header(tmp_path: Path) -> None:
    own_trace, own_parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    with otlp_receiver() as receiver:
        async with traced(tmp_path, receiver) as url, client(url, "auto", traceparent=TRACEPARENT) as c:
            await c.call_tool("meta", {}, meta={"traceparent": f"00-{own_trace}-{own_parent}-01"})
        spans = receiver.spans()
    server = named(spans, "tools/call meta", "SERVER")[0]
    assert (server.trace_id, server.parent_span_id) == (own_trace, own_parent)


async def test_the_server_is_told_the_client_spans_context(tmp_path: Path) -> None:
    """The request written to the server carries, in ``params._meta``, the context of the CLIENT span
    that is exported (made after the call, with the ids the server was told); the rest of the
    client's ``_meta`` passes as it was. The fixture's ``meta`` tool echoes the ``_meta`` it got."""
    with otlp_receiver() as receiver:
        async with traced(tmp_path, receiver) as url, client(url, "auto") as c:
            echoed = await c.call_tool("meta", {}, meta={"traceparent": TRACEPARENT, "keep": "me"})
            rooted = await c.call_tool("meta", {})
        spans = receiver.spans()
    told = [json.loads(_text(result))["traceparent"] for result in (echoed, rooted)]
    servers = named(spans, "tools/call meta", "SERVER")
    uppers = named(spans, "tools/call meta", "CLIENT")
    assert json.loads(_text(echoed))["keep"] == "me"
    assert len(servers) == len(uppers) == 2
    for traceparent in told:
        _, trace_id, span_id, flags = traceparent.split("-")
        upstream = next(span for span in uppers if span.span_id == span_id)
        server = next(span for span in servers if span.span_id == upstream.parent_span_id)
        assert (upstream.trace_id, server.trace_id, flags) == (trace_id, trace_id, "01")
    assert told[0].split("-")[1] == TRACE_ID  # the client's trace continues
    assert told[1].split("-")[1] != TRACE_ID  # a new root, told to the server before its span exists


async def test_an_unsampled_root_is_told_as_unsampled_and_not_exported(tmp_path: Path) -> None:
    """With no trace sampled, the server still gets a trace context (flags ``00``) and nothing is exported."""
    with otlp_receiver() as receiver:
        async with traced(tmp_path, receiver, ratio=0.0) as url, client(url, "auto") as c:
            told = json.loads(_text(await c.call_tool("meta", {})))["traceparent"]
            await c.call_tool("echo", {"message": "x"})
        spans = receiver.spans()
    assert told.endswith("-00") and not [s for s in spans if s.name.startswith("tools/call")]


async def test_tracing_off_forwards_the_clients_context_untouched(tmp_path: Path) -> None:
    async with traced(tmp_path, None) as url, client(url, "auto") as c:
        echoed = await c.call_tool("meta", {}, meta={"traceparent": TRACEPARENT, "keep": "me"})
    got = json.loads(_text(echoed))
    assert (got["traceparent"], got["keep"]) == (TRACEPARENT, "me") and "tracestate" not in got


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_an_answer_is_measured_as_the_server_wrote_it(tmp_path: Path) -> None:
    """``clawplane.response.bytes`` is the size of the server's answer line. The SDK's fixture answers
    a 5,000-character echo with the text twice (``content`` and ``structuredContent``) in an
    envelope of a few hundred bytes: more than 10,000 bytes, not a third copy."""
    message = "x" * 5000
    with otlp_receiver() as receiver:
        async with traced(tmp_path, receiver) as url, client(url, "legacy") as c:
            await c.call_tool("echo", {"message": message})
        spans = receiver.spans()
    size = named(spans, "tools/call echo", "SERVER")[0].attributes["clawplane.response.bytes"]
    assert 2 * len(message) < size < 2 * len(message) + 1000


async def test_no_carrier_starts_a_new_sampled_root(tmp_path: Path) -> None:
    with otlp_receiver() as receiver:
        async with traced(tmp_path, receiver) as url, client(url, "auto") as c:
            await c.call_tool("echo", {"message": "x"})
        spans = receiver.spans()
    server = named(spans, "tools/call echo", "SERVER")[0]
    assert server.parent_span_id == "" and server.trace_id != TRACE_ID


@pytest.mark.parametrize("payloads", [False, True])
async def test_a_secret_never_reaches_the_collector(tmp_path: Path, payloads: bool) -> None:
    KNOWN.add(CANARY)  # as resolving the server's valueFrom does in the supervisor
    with otlp_receiver() as receiver:
        async with traced(tmp_path, receiver, payloads=payloads) as url, client(url, "auto") as c:
            await c.call_tool("echo", {"message": f"the secret is {CANARY}"})
            with pytest.raises(MCPError):
                await c.call_tool("fail_with_data", {"message": f"failed with {CANARY}"})
        spans = receiver.spans()
        raw = receiver.raw()
    echo = named(spans, "tools/call echo", "SERVER")[0]
    assert raw
    for form in encodings(CANARY):
        assert form not in raw, form
    if payloads:  # recorded, with the secret redacted
        assert "the secret is <redacted>" in echo.attributes["gen_ai.tool.call.arguments"]
        assert "<redacted>" in echo.attributes["gen_ai.tool.call.result"]
    else:
        assert "gen_ai.tool.call.arguments" not in echo.attributes


async def test_tracing_is_off_by_default(tmp_path: Path) -> None:
    with otlp_receiver() as receiver:
        async with traced(tmp_path, None) as url, client(url, "auto", traceparent=TRACEPARENT) as c:
            await c.call_tool("echo", {"message": "x"})
        assert receiver.bodies == []
