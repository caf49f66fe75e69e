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
from dataclasses import dataclass
from typing import Any

from opentelemetry.context import Context
from opentelemetry.trace import (
    Span,
    SpanKind,
    Status,
    StatusCode,
    Tracer,
    get_current_span,
    set_span_in_context,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from clawplane.secrets import redact
from clawplane.telemetry.calls import UPSTREAM_CONTEXT, Call, CallRecord, Outcome
from clawplane.telemetry.otel import Tracing
from clawplane.telemetry.spanids import PresetIds, new_span_id, new_trace_id, traceparent

__all__ = ["SEMCONV", "CallSpans", "span_name"]

SEMCONV = "semantic-conventions-genai v0.1.0 (MCP), OpenTelemetry semantic conventions 1.45"
MAX_PAYLOAD_CHARS = 8192
_PROPAGATOR = TraceContextTextMapPropagator()
_TRACER, _ROOT = "trace.tracer", "trace.root"
_FORWARDS, _HOLD_AT, _HOLDS = "trace.forwards", "trace.hold_at", "trace.holds"
_FAILED = frozenset({Outcome.ERROR, Outcome.TOOL_ERROR})


def span_name(method: str, target: str | None) -> str:
    """``{mcp.method.name} {target}``, or the method alone without a target."""
    return f"{method} {target}" if target else method


class CallSpans:
    """A ``CallSink`` making the spans of each call while ``tracing`` has a tracer.

    A call's spans are made once it has finished, off the event loop (``spanwork``), with the
    times its moments happened. The upstream still learns its CLIENT span's context as the request
    is written (``UPSTREAM_CONTEXT``, which the proxy puts in ``params._meta``): the ids are drawn
    then and the worker gives them to the spans it makes (``spanids``).
    """

    def __init__(self, tracing: Tracing) -> None:
        self.tracing = tracing

    def begin(self, call: Call) -> None:
        """Note the tracer this call's spans will come from (None: tracing is off)."""
        tracer = self.tracing.tracer
        if tracer is not None:
            call.state[_TRACER] = tracer

    def forwarded(self, call: Call) -> None:
        """Note when the request was written upstream, and the context it carries there."""
        if _TRACER not in call.state:
            return
        root: _Root | None = call.state.get(_ROOT)
        if root is None:
            root = call.state[_ROOT] = _root(call, self.tracing)
        span_id = new_span_id()  # one CLIENT span per attempt (asked again: client input)
        call.state.setdefault(_FORWARDS, []).append((time.time_ns(), span_id))
        carrier = {"traceparent": traceparent(root.trace_id, span_id, root.sampled)}
        if root.tracestate:
            carrier["tracestate"] = root.tracestate
        call.state[UPSTREAM_CONTEXT] = carrier

    def held(self, call: Call) -> None:
        """Note when the wait for an approval began."""
        if _TRACER in call.state:
            call.state[_HOLD_AT] = time.time_ns()

    def released(self, call: Call, verdict: str) -> None:
        """Note the approval wait's end, with its verdict."""
        started = call.state.pop(_HOLD_AT, None)
        if started is not None:
            call.state.setdefault(_HOLDS, []).append((started, time.time_ns(), verdict))

    def finished(self, call: Call, record: CallRecord) -> None:
        """Queue the making of the call's spans."""
        tracer: Tracer | None = call.state.pop(_TRACER, None)
        if tracer is None:
            return
        end = int((call.started_at + record.duration_s) * 1e9)
        holds: list[tuple[int, int, str]] = call.state.pop(_HOLDS, [])
        if _HOLD_AT in call.state:
            holds.append((call.state.pop(_HOLD_AT), end, "withdrawn"))
        made = _Made(
            tracer, self.tracing.ids, call, record, call.state.pop(_ROOT, None),
            call.state.pop(_FORWARDS, []), holds, self.tracing.record_payloads, end,
        )  # fmt: skip
        self.tracing.work.put(made)


@dataclass(frozen=True, slots=True)
class _Root:
    """The ids a call's SERVER span will have, drawn when its request first went upstream."""

    trace_id: int
    span_id: int
    sampled: bool
    tracestate: str


def _root(call: Call, tracing: Tracing) -> _Root:
    """The SERVER span's ids: continuing the client's context, or a new root sampled by the ratio
    (as the SDK's ``ParentBased(TraceIdRatioBased)`` will decide for the same trace id)."""
    parent = get_current_span(_PROPAGATOR.extract(call.carrier)).get_span_context() if call.carrier else None
    if parent is not None and parent.is_valid:
        return _Root(
            parent.trace_id, new_span_id(), parent.trace_flags.sampled, call.carrier.get("tracestate", "")
        )
    trace_id = new_trace_id()
    return _Root(trace_id, new_span_id(), tracing.samples(trace_id), "")


@dataclass(frozen=True, slots=True)
class _Made:
    """Every span of a finished call, made when called (on the span worker) with the times its
    moments happened and the ids its upstream was told."""

    tracer: Tracer
    ids: PresetIds
    call: Call
    record: CallRecord
    root: _Root | None
    forwards: list[tuple[int, int]]
    holds: list[tuple[int, int, str]]
    payloads: bool
    end: int

    def __call__(self) -> None:
        call, root = self.call, self.root
        if root is None:
            server = _start_server(self.tracer, call, self.payloads)
        else:
            with self.ids.preset(root.span_id, root.trace_id):
                server = _start_server(self.tracer, call, self.payloads)
        _holds(self.tracer, server, self.holds)
        client = None
        for started, span_id in self.forwards:
            if client is not None:
                client.end(end_time=started)  # asked again (client input): one span per attempt
            with self.ids.preset(span_id):
                client = _start_client(self.tracer, call, server, started)
        _close(server, client, call, self.record, self.payloads, self.end)


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


def _start_client(tracer: Tracer, call: Call, server: Span, started: int) -> Span:
    """A CLIENT span of the request written upstream at ``started``, under ``server``."""
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
