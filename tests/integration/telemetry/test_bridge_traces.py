"""``clawplane bridge`` exports the spans of the calls it carries, and prints their audit trail.

A real bridge process serves the real stdio proxy fixture; a real SDK client calls through it
with a ``traceparent`` header; spans and OTLP log records go to the real loopback receiver. The
bridge is told where by the ``OTEL_*`` environment alone (a container's way) or by the flags the
Kubernetes operator renders (``--traces-endpoint``, ``--trace-header NAME=VAR``). A canary secret
(the collector's header, the server's env, a tool argument) is in no exported byte and no log line.
"""

from __future__ import annotations

import json
import signal
import sys
from subprocess import PIPE
from typing import Any

import anyio
import httpx2
import pytest
from anyio.abc import Process
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.fixtures.servers.helpers import TOKEN, bridge_process, script
from tests.integration.telemetry.test_call_traces import CANARY, PARENT_ID, TRACE_ID, TRACEPARENT, encodings
from tests.support.otlp_receiver import OtlpReceiver, ReceivedSpan, otlp_receiver

pytestmark = pytest.mark.anyio

ARGUMENT = "argument-canary-5c1e9b"
_OTEL = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_SDK_DISABLED",
    "OTEL_SERVICE_NAME",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
)


def environment(**extra: str) -> dict[str, str]:
    """The test's environment without OTEL settings of its own, plus ``extra``."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in _OTEL}
    env.update(extra)
    return env


async def call(url: str, **tools: dict[str, Any]) -> dict[str, bool]:
    """Call each tool once through ``url`` with a client ``traceparent``; whether each answered isError."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}", "traceparent": TRACEPARENT}, timeout=30)
    errors: dict[str, bool] = {}
    async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30) as client:
        for tool, arguments in tools.items():
            try:
                errors[tool] = (await client.call_tool(tool, arguments)).is_error
            except Exception:  # a JSON-RPC error answer (the fail tool)
                errors[tool] = True
    return errors


async def stop(process: Process) -> tuple[int, str, str]:
    """SIGTERM the bridge; its exit code, stdout and the rest of its stderr once it has exited."""
    assert process.stdout is not None and process.stderr is not None
    process.send_signal(signal.SIGTERM)
    out, err = b"", b""
    with anyio.fail_after(30):

        async def read_out() -> None:
            nonlocal out
            assert process.stdout is not None
            async for chunk in process.stdout:
                out += chunk

        async def read_err() -> None:
            nonlocal err
            assert process.stderr is not None
            async for chunk in process.stderr:
                err += chunk

        async with anyio.create_task_group() as tg:
            tg.start_soon(read_out)
            tg.start_soon(read_err)
        code = await process.wait()
    return code, out.decode(), err.decode()


def server_span(spans: list[ReceivedSpan], tool: str) -> ReceivedSpan | None:
    return next((s for s in spans if s.kind == "SERVER" and s.name == f"tools/call {tool}"), None)


def assert_no_canary(receiver: OtlpReceiver, *texts: str) -> None:
    raw = receiver.raw()
    for secret in (CANARY, ARGUMENT):
        for form in encodings(secret):
            assert form not in raw, form
            for text in texts:
                assert form.decode() not in text, form


async def test_the_bridge_exports_spans_from_otel_env_and_prints_its_audit_log() -> None:
    with otlp_receiver() as receiver:
        env = environment(
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.base,
            OTEL_EXPORTER_OTLP_HEADERS=f"authorization=Bearer%20{CANARY}",
            OTEL_SERVICE_NAME="bridge-under-test",
            OTEL_BSP_SCHEDULE_DELAY="60000",  # nothing leaves before shutdown: the exit must flush
            CLAWPLANE_AUDIT_EXPORT_LOGS="1",
            FIXTURE_SECRET=CANARY,
        )
        child = (sys.executable, script("proxy"))
        args = ["--name", "notes", "--audit-log"]
        async with bridge_process(*child, env=env, args=args, stdout=PIPE) as (bridge, url):
            errors = await call(url, echo={"message": ARGUMENT}, fail={"message": f"leaked {CANARY}"})
            assert errors == {"echo": False, "fail": True}
            code, out, err = await stop(bridge)
        assert code == 0, err

        spans = receiver.spans()  # flushed at exit, not before
        echo = server_span(spans, "echo")
        assert echo is not None, [(s.name, s.kind) for s in spans]
        assert (echo.trace_id, echo.parent_span_id) == (TRACE_ID, PARENT_ID)
        assert echo.resource["service.name"] == "bridge-under-test"
        assert echo.attributes["mcp.method.name"] == "tools/call"
        assert echo.attributes["gen_ai.tool.name"] == "echo"
        assert echo.attributes["clawplane.server"] == "notes"
        assert echo.attributes["clawplane.endpoint"] == "hosted"
        assert echo.attributes["clawplane.consumer"] == "bridge"
        assert echo.attributes["clawplane.outcome"] == "ok"
        assert "gen_ai.tool.call.arguments" not in echo.attributes
        clients = [s for s in spans if s.kind == "CLIENT" and s.parent_span_id == echo.span_id]
        assert [c.name for c in clients] == ["tools/call echo"]
        failed = server_span(spans, "fail")
        assert failed is not None and failed.status_code == 2
        assert "<redacted>" in failed.status_message

        lines = [json.loads(line) for line in out.splitlines()]
        assert [(d["event"], d["tool"], d["outcome"]) for d in lines] == [
            ("clawplane.tool_call", "echo", "ok"),
            ("clawplane.tool_call", "fail", "error"),
        ]
        first = lines[0]
        assert {k: first[k] for k in ("server", "consumer", "endpoint", "errorCode")} == {
            "server": "notes",
            "consumer": "bridge",
            "endpoint": "hosted",
            "errorCode": None,
        }
        assert set(first) == {
            "event", "at", "durationMs", "endpoint", "server", "tool", "consumer", "agent", "session",
            "revision", "outcome", "errorCode", "error", "heldMs", "bytesIn", "bytesOut",
        }  # fmt: skip
        assert lines[1]["errorCode"] == -32000 and lines[1]["error"] == "leaked <redacted>"
        assert any(path == "/v1/logs" for path, _, _ in receiver.bodies), "no OTLP log records exported"
        assert {h.get("authorization") for _, _, h in receiver.bodies} == {f"Bearer {CANARY}"}
        assert_no_canary(receiver, out, err)


async def test_the_operators_flags_export_with_a_header_the_server_never_sees() -> None:
    with otlp_receiver() as receiver:
        env = environment(TRACE_HEADER_SOURCE=CANARY, OTEL_BSP_SCHEDULE_DELAY="50")
        args = [
            "--name", "notes", "--traces-endpoint", receiver.url, "--service-name", "ns-gateway",
            "--trace-header", "Authorization=TRACE_HEADER_SOURCE", "--trace-sample-ratio", "0",
        ]  # fmt: skip
        async with bridge_process(sys.executable, script("proxy"), env=env, args=args, stdout=PIPE) as (
            bridge,
            url,
        ):
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
            async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30) as client:
                seen = await client.call_tool("env", {"name": "TRACE_HEADER_SOURCE"})
            # A sampled client trace is followed at ratio 0; the calls without one above are not recorded.
            await call(url, echo={"message": "hello"})
            spans = receiver.wait_for(lambda spans: server_span(spans, "echo") is not None)
            code, out, err = await stop(bridge)
        assert code == 0, err
        assert seen.content[0].text == "<unset>"  # type: ignore[union-attr]
        assert server_span(spans, "env") is None
        echo = server_span(spans, "echo")
        assert echo is not None and echo.parent_span_id == PARENT_ID
        assert echo.resource["service.name"] == "ns-gateway"
        assert {h.get("authorization") for _, _, h in receiver.bodies} == {CANARY}
        assert out == ""  # no --audit-log: no lines
        assert_no_canary(receiver, out, err)


async def test_a_header_whose_variable_is_not_set_is_left_out_with_a_warning() -> None:
    """In a pod the variable comes from an optional Secret key: a missing Secret costs the header only."""
    with otlp_receiver() as receiver:
        env = environment(OTEL_BSP_SCHEDULE_DELAY="50", CLAWPLANE_BRIDGE_TOKEN=TOKEN)
        args = ["--traces-endpoint", receiver.url, "--trace-header", "Authorization=NOT_SET_HERE"]
        async with bridge_process(sys.executable, script("proxy"), env=env, args=args, stdout=PIPE) as (
            bridge,
            url,
        ):
            await call(url, echo={"message": "hello"})
            receiver.wait_for(lambda spans: server_span(spans, "echo") is not None)
            code, _out, err = await stop(bridge)
    assert code == 0, err
    assert {h.get("authorization") for _, _, h in receiver.bodies} == {None}
    # The warning came before "listening on" (bridge_process read it): a bridge whose server exits at once.
    argv = [sys.executable, "-m", "clawplane", "bridge", "--port", "0", *args, "--", sys.executable, "-c", "0"]
    done = await anyio.run_process(argv, env=env, check=False)
    text = done.stderr.decode()
    assert "NOT_SET_HERE is not set, so the header is not sent" in text and "Traceback" not in text
