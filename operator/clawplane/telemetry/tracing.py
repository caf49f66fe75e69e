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

from opentelemetry.trace import get_current_span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from clawplane.secrets import redact
from clawplane.telemetry import otlpwire as wire
from clawplane.telemetry.calls import UPSTREAM_CONTEXT, Call, CallRecord, Outcome
from clawplane.telemetry.otel import CallExport, Tracing
from clawplane.telemetry.spanids import new_span_id, new_trace_id, traceparent

__all__ = ["SEMCONV", "CallSpans", "span_name"]

SEMCONV = "semantic-conventions-genai v0.1.0 (MCP), OpenTelemetry semantic conventions 1.45"
MAX_PAYLOAD_CHARS = 8192
_PROPAGATOR = TraceContextTextMapPropagator()
_EXPORT, _ROOT = "trace.export", "trace.root"
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
        """Note where this call's spans will go (nowhere: tracing is off)."""
        export = self.tracing.calls
        if export is not None:
            call.state[_EXPORT] = export

    def forwarded(self, call: Call) -> None:
        """Note when the request was written upstream, and the context it carries there."""
        if _EXPORT not in call.state:
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
        if _EXPORT in call.state:
            call.state[_HOLD_AT] = time.time_ns()

    def released(self, call: Call, verdict: str) -> None:
        """Note the approval wait's end, with its verdict."""
        started = call.state.pop(_HOLD_AT, None)
        if started is not None:
            call.state.setdefault(_HOLDS, []).append((started, time.time_ns(), verdict))

    def finished(self, call: Call, record: CallRecord) -> None:
        """Queue the making of the call's spans."""
        export: CallExport | None = call.state.pop(_EXPORT, None)
        if export is None:
            return
        end = int((call.started_at + record.duration_s) * 1e9)
        holds: list[tuple[int, int, str]] = call.state.pop(_HOLDS, [])
        if _HOLD_AT in call.state:
            holds.append((call.state.pop(_HOLD_AT), end, "withdrawn"))
        made = _Made(
            export, call, record, call.state.pop(_ROOT, None) or _root(call, self.tracing),
            call.state.pop(_FORWARDS, []), holds, self.tracing.record_payloads, end,
        )  # fmt: skip
        self.tracing.work.put(made)


# Neither is frozen (made on the event loop for every traced call; see CallRecord); neither changes.
@dataclass(slots=True)
class _Root:
    """The ids a call's SERVER span will have, drawn when its request first went upstream."""

    trace_id: int
    span_id: int
    sampled: bool
    tracestate: str
    parent_span_id: int | None = None
    """The client's span this call continues (None: a new root)."""


def _root(call: Call, tracing: Tracing) -> _Root:
    """The SERVER span's ids: continuing the client's context, or a new root sampled by the ratio
    (as the SDK's ``ParentBased(TraceIdRatioBased)`` will decide for the same trace id)."""
    parent = get_current_span(_PROPAGATOR.extract(call.carrier)).get_span_context() if call.carrier else None
    if parent is not None and parent.is_valid:
        return _Root(
            parent.trace_id, new_span_id(), parent.trace_flags.sampled, call.carrier.get("tracestate", ""),
            parent.span_id,
        )  # fmt: skip
    trace_id = new_trace_id()
    return _Root(trace_id, new_span_id(), tracing.samples(trace_id), "")


@dataclass(slots=True)
class _Made:
    """Every span of a finished call, written when called (on the span worker) with the times its
    moments happened and the ids its upstream was told; an unsampled call's are not written."""

    export: CallExport
    call: Call
    record: CallRecord
    root: _Root
    forwards: list[tuple[int, int]]
    holds: list[tuple[int, int, str]]
    payloads: bool
    end: int

    def __call__(self) -> None:
        call, root, record = self.call, self.root, self.record
        if not root.sampled:
            return
        name = span_name(call.method, call.target)
        closing = _closing_attributes(call, record, self.payloads)
        status = _status(record, closing)
        spans = [
            wire.span(
                trace_id=root.trace_id, span_id=root.span_id, parent_span_id=root.parent_span_id, name=name,
                kind=wire.KIND_SERVER, start_ns=int(call.started_at * 1e9), end_ns=self.end,
                attrs={**_server_attributes(call, self.payloads), **closing}, trace_state=root.tracestate,
                **status,
            )
        ]  # fmt: skip
        for started, ended, verdict in self.holds:
            spans.append(
                wire.span(
                    trace_id=root.trace_id, span_id=new_span_id(), parent_span_id=root.span_id,
                    name="approval hold", kind=wire.KIND_INTERNAL, start_ns=started, end_ns=ended,
                    attrs={"clawplane.approval.verdict": verdict}, trace_state=root.tracestate,
                )
            )  # fmt: skip
        client = {**_client_attributes(call), **_client_part(closing)}
        ends = [started for started, _ in self.forwards[1:]] + [self.end]  # asked again: one per attempt
        for (started, span_id), ended in zip(self.forwards, ends[: len(self.forwards)], strict=True):
            spans.append(
                wire.span(
                    trace_id=root.trace_id, span_id=span_id, parent_span_id=root.span_id, name=name,
                    kind=wire.KIND_CLIENT, start_ns=started, end_ns=ended, attrs=client,
                    trace_state=root.tracestate, **status,
                )
            )  # fmt: skip
        self.export.add(spans)


def _server_attributes(call: Call, payloads: bool) -> dict[str, Any]:
    """The SERVER span's attributes known when the call arrived."""
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
    return attributes


def _client_attributes(call: Call) -> dict[str, Any]:
    """A CLIENT span's attributes (the request written to the server)."""
    attributes: dict[str, Any] = {"mcp.method.name": call.method, "network.transport": "pipe"}
    attributes.update(_target_attributes(call))
    return attributes


def _closing_attributes(call: Call, record: CallRecord, payloads: bool) -> dict[str, Any]:
    """The SERVER span's attributes of how the call ended."""
    attributes: dict[str, Any] = {"clawplane.outcome": record.outcome.value}
    if record.bytes_out:
        attributes["clawplane.response.bytes"] = record.bytes_out
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
    return attributes


def _status(record: CallRecord, closing: dict[str, Any]) -> dict[str, Any]:
    """A failed call's span status: ERROR with the message (redacted at ``finish``) or error type."""
    if record.outcome not in _FAILED:
        return {}
    return {
        "status_code": wire.STATUS_ERROR,
        "status_message": record.error or str(closing.get("error.type", "")),
    }


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
