"""Spans of proxied MCP calls, after OpenTelemetry's semantic conventions for MCP.

Followed: the MCP conventions of ``semantic-conventions-genai`` v0.1.0 (status Development;
OpenTelemetry semantic conventions 1.45). Each request through the proxy is a SERVER span named
``{mcp.method.name} {target}`` (the tool or prompt, when there is one), continuing the client's
W3C trace context (its ``params._meta``, else its HTTP headers; none: a new root, sampled by the
configured ratio). The request written to the server is a CLIENT child, an approval wait an
INTERNAL child ``approval hold``. Arguments and results are recorded only with ``recordPayloads``,
and then only after the site's redactor (every secret clawplane resolved, in every encoding).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, set_span_in_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from clawplane.secrets import redact
from clawplane.telemetry.calls import UPSTREAM_CONTEXT, Call, CallRecord, Outcome
from clawplane.telemetry.otel import Tracing

__all__ = ["SEMCONV", "CallSpans", "span_name"]

SEMCONV = "semantic-conventions-genai v0.1.0 (MCP), OpenTelemetry semantic conventions 1.45"
MAX_PAYLOAD_CHARS = 8192
_PROPAGATOR = TraceContextTextMapPropagator()
_SERVER, _CLIENT, _HOLD, _TRACER = "trace.server", "trace.client", "trace.hold", "trace.tracer"
_FORWARDS, _HOLD_AT, _HOLDS = "trace.forwards", "trace.hold_at", "trace.holds"
_FAILED = frozenset({Outcome.ERROR, Outcome.TOOL_ERROR})


def span_name(method: str, target: str | None) -> str:
    """``{mcp.method.name} {target}``, or the method alone without a target."""
    return f"{method} {target}" if target else method


class CallSpans:
    """A ``CallSink`` making the spans of each call while ``tracing`` has a tracer.

    A call's spans are made once it has finished, off the event loop (``spanwork``), with the
    times its moments happened; only a call whose context the upstream gets (``Call.propagate``)
    has its spans made as it happens, since the upstream needs the CLIENT span's id at once.
    """

    def __init__(self, tracing: Tracing) -> None:
        self.tracing = tracing

    def begin(self, call: Call) -> None:
        """Note the tracer this call's spans will come from (None: tracing is off)."""
        tracer = self.tracing.tracer
        if tracer is not None:
            call.state[_TRACER] = tracer

    def forwarded(self, call: Call) -> None:
        """Note when the request was written upstream (or start its CLIENT span, to propagate it)."""
        tracer: Tracer | None = call.state.get(_TRACER)
        if tracer is None:
            return
        if not call.propagate and _SERVER not in call.state:
            call.state.setdefault(_FORWARDS, []).append(time.time_ns())
            return
        if _SERVER not in call.state:
            call.state[_SERVER] = _start_server(tracer, call, self.tracing.record_payloads)
        server: Span = call.state[_SERVER]
        _end(call.state.pop(_CLIENT, None))  # asked again (client input): one span per attempt
        client = _start_client(tracer, call, server, None)
        call.state[_CLIENT] = client
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, context=set_span_in_context(client))
        call.state[UPSTREAM_CONTEXT] = carrier

    def held(self, call: Call) -> None:
        """Note (or start the span of) the wait for an approval."""
        tracer: Tracer | None = call.state.get(_TRACER)
        server: Span | None = call.state.get(_SERVER)
        if tracer is not None and server is not None:
            call.state[_HOLD] = tracer.start_span(
                "approval hold", context=set_span_in_context(server), kind=SpanKind.INTERNAL
            )
        elif tracer is not None:
            call.state[_HOLD_AT] = time.time_ns()

    def released(self, call: Call, verdict: str) -> None:
        """Note (or end the span of) the approval wait, with its verdict."""
        hold: Span | None = call.state.pop(_HOLD, None)
        if hold is not None:
            hold.set_attribute("clawplane.approval.verdict", verdict)
            hold.end()
            return
        started = call.state.pop(_HOLD_AT, None)
        if started is not None:
            call.state.setdefault(_HOLDS, []).append((started, time.time_ns(), verdict))

    def finished(self, call: Call, record: CallRecord) -> None:
        """End the call's spans, or queue the making of them."""
        tracer: Tracer | None = call.state.pop(_TRACER, None)
        if tracer is None:
            return
        end = int((call.started_at + record.duration_s) * 1e9)
        payloads = self.tracing.record_payloads
        server: Span | None = call.state.pop(_SERVER, None)
        holds: list[tuple[int, int, str]] = call.state.pop(_HOLDS, [])
        if _HOLD_AT in call.state:
            holds.append((call.state.pop(_HOLD_AT), end, "withdrawn"))
        if server is not None:  # made as it happened (propagated); a hold came before it
            _end(call.state.pop(_HOLD, None))
            _holds(tracer, server, holds)
            _close(server, call.state.pop(_CLIENT, None), call, record, payloads, end)
            return
        forwards: list[int] = call.state.pop(_FORWARDS, [])
        self.tracing.work.put(partial(_made_later, tracer, call, record, forwards, holds, payloads, end))


def _made_later(
    tracer: Tracer,
    call: Call,
    record: CallRecord,
    forwards: list[int],
    holds: list[tuple[int, int, str]],
    payloads: bool,
    end: int,
) -> None:
    """Every span of a finished call, with the times its moments happened (on the span worker)."""
    server = _start_server(tracer, call, payloads)
    _holds(tracer, server, holds)
    client = None
    for started in forwards:
        if client is not None:
            client.end(end_time=started)  # asked again (client input): one span per attempt
        client = _start_client(tracer, call, server, started)
    _close(server, client, call, record, payloads, end)


def _holds(tracer: Tracer, server: Span, holds: list[tuple[int, int, str]]) -> None:
    """An ``approval hold`` span under ``server`` for each (start, end, verdict) wait."""
    for started, ended, verdict in holds:
        hold = tracer.start_span(
            "approval hold", context=set_span_in_context(server), kind=SpanKind.INTERNAL,
            attributes={"clawplane.approval.verdict": verdict}, start_time=started,
        )  # fmt: skip
        hold.end(end_time=ended)


def _start_server(tracer: Tracer, call: Call, payloads: bool) -> Span:
    """The SERVER span of ``call``, continuing the client's trace context, from when it arrived."""
    parent = _PROPAGATOR.extract(call.carrier) if call.carrier else Context()
    site = call.site
    attributes: dict[str, Any] = {
        "mcp.method.name": call.method,
        "network.transport": "pipe" if site.transport == "stdio" else "tcp",
        "clawplane.endpoint": site.endpoint,
        "clawplane.server": site.server,
        "clawplane.consumer": site.consumer,
        "clawplane.request.bytes": call.bytes_in,
    }
    if site.transport != "stdio":
        attributes["network.protocol.name"] = "http"
    if call.request_id is not None:
        attributes["jsonrpc.request.id"] = str(call.request_id)
    if site.session:
        attributes["mcp.session.id"] = site.session
    if site.revision:
        attributes["mcp.protocol.version"] = site.revision
    if site.agent:
        attributes["clawplane.agent"] = site.agent
    attributes.update(_target_attributes(call))
    if call.resource_uri is not None:
        attributes["mcp.resource.uri"] = _redactor(call)(call.resource_uri)
    if payloads and call.arguments is not None:
        attributes["gen_ai.tool.call.arguments"] = _payload(call, call.arguments)
    return tracer.start_span(
        span_name(call.method, call.target), context=parent, kind=SpanKind.SERVER,
        attributes=attributes, start_time=int(call.started_at * 1e9),
    )  # fmt: skip


def _start_client(tracer: Tracer, call: Call, server: Span, started: int | None) -> Span:
    """A CLIENT span of the request written upstream, under ``server`` (``started``: now)."""
    attributes: dict[str, Any] = {"mcp.method.name": call.method, "network.transport": "pipe"}
    attributes.update(_target_attributes(call))
    return tracer.start_span(
        span_name(call.method, call.target), context=set_span_in_context(server),
        kind=SpanKind.CLIENT, attributes=attributes, start_time=started,
    )  # fmt: skip


def _close(
    server: Span, client: Span | None, call: Call, record: CallRecord, payloads: bool, end: int
) -> None:
    """End ``server`` and ``client`` at ``end`` with the call's outcome."""
    attributes: dict[str, Any] = {"clawplane.outcome": record.outcome.value}
    error_type: str | None = None
    if record.outcome is Outcome.TOOL_ERROR:
        error_type = "tool_error"
    elif record.error_code is not None:
        error_type = str(record.error_code)
        attributes["rpc.response.status_code"] = str(record.error_code)
    elif record.outcome is Outcome.ERROR:
        error_type = "_OTHER"
    if error_type is not None:
        attributes["error.type"] = error_type
    if payloads and call.answer is not None and "result" in call.answer:
        attributes["gen_ai.tool.call.result"] = _payload(call, call.answer["result"])
    for span in (client, server):
        if span is None:
            continue
        span.set_attributes(attributes if span is server else _client_part(attributes))
        if record.outcome in _FAILED:
            # The message passed the site's redactor at ``finish``; it may still be long.
            span.set_status(Status(StatusCode.ERROR, record.error or error_type))
        span.end(end_time=end)


def _client_part(attributes: dict[str, Any]) -> dict[str, Any]:
    keep = ("error.type", "rpc.response.status_code")
    return {k: v for k, v in attributes.items() if k in keep}


def _target_attributes(call: Call) -> dict[str, Any]:
    if call.target is None:
        return {}
    if call.method == "tools/call":
        return {"gen_ai.tool.name": call.target, "gen_ai.operation.name": "execute_tool"}
    if call.method == "prompts/get":
        return {"gen_ai.prompt.name": call.target}
    return {}


def _redactor(call: Call) -> Callable[[str], str]:
    return call.site.redact or redact


def _payload(call: Call, value: Any) -> str:
    """``value`` as JSON, through the site's redactor, shortened."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except ValueError:
        text = repr(value)
    # Redacted whole before it is cut: a secret split at the cut would escape its pattern.
    return _redactor(call)(text)[:MAX_PAYLOAD_CHARS]


def _end(span: Span | None) -> None:
    if span is not None:
        span.end()
