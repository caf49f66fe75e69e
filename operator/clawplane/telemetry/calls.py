"""One MCP request as the proxy carries it: where it came from, what it asked, how it ended.

The proxy knows a request at two moments: when a client's message reaches the multiplexer of
the server it is for (``CallTelemetry.begin``) and when its answer goes back, or the proxy
answers it itself, or the caller leaves first (``Call.finish``). Everything the supervisor
learns about traffic — spans, metrics, the audit trail of tool calls, the dashboard's charts —
hangs off those two moments, through the ``CallSink`` each of them implements. A sink records
names, sizes, outcomes and times; ``Call.arguments`` and ``Call.answer`` are there only for the
tracing sink's opt-in ``recordPayloads``, which passes them through the site's redactor first.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, TypeVar

__all__ = [
    "TOOL_CALL_EVENT",
    "TRACE_KEYS",
    "UPSTREAM_CONTEXT",
    "Call",
    "CallRecord",
    "CallSink",
    "CallSite",
    "CallTelemetry",
    "Outcome",
]

logger = logging.getLogger(__name__)
S = TypeVar("S")

TOOL_CALL_EVENT = "clawplane.tool_call"
"""A recorded tool call's name outside clawplane: OTLP log records' ``event_name``, audit lines' ``event``."""

TRACE_KEYS = ("traceparent", "tracestate")
"""W3C trace context keys a client may send, as HTTP headers or in a request's ``params._meta``."""

UPSTREAM_CONTEXT = "trace.upstream"
"""``Call.state`` key of the trace context a forwarded request carries upstream (set by the tracing
sink at ``forwarded``; the proxy puts it in the request's ``params._meta``)."""

# The methods whose target (a tool, a prompt) names what was called; a resource's URI is not a
# target (unbounded), only a span attribute.
_TARGET_PARAM = {"tools/call": "name", "prompts/get": "name"}
_MAX_ERROR_CHARS = 300
_ERROR_WINDOW = 4096


class Outcome(StrEnum):
    """How one request ended, as the caller saw it."""

    OK = "ok"
    TOOL_ERROR = "tool_error"
    """A ``tools/call`` result with ``isError: true``: the tool ran and failed."""
    ERROR = "error"
    """A JSON-RPC error answer, from the server or from the proxy."""
    REFUSED = "refused"
    """The proxy did not forward it: an approval was refused, or the tool is filtered out."""
    CANCELLED = "cancelled"
    """The caller cancelled it or went away before the answer."""


@dataclass(slots=True)
class CallSite:
    """Where requests arrive: one client session, one 2026-07-28 request, or one agent's backend."""

    endpoint: str
    """``hosted`` (``/mcp/<server>`` and ``clawplane bridge``) or ``agent`` (``/mcp/agents/<agent>``)."""
    server: str
    consumer: str
    """The token's consumer: who called."""
    agent: str | None = None
    session: str | None = None
    """The client session's id (a span attribute, never a metric label)."""
    revision: str | None = None
    """The MCP protocol revision the client speaks, once known."""
    transport: str = "streamable-http"
    known_tool: Callable[[str], bool] | None = None
    """Whether a tool name is one the server lists (others are not metric labels)."""
    redact: Callable[[str], str] | None = None
    """The server's redactor, for error messages (they may quote a secret it was given)."""


@dataclass(slots=True)
class Call:
    """One request in flight."""

    site: CallSite
    method: str
    target: str | None
    request_id: Any
    resource_uri: str | None
    carrier: dict[str, str]
    """The client's W3C trace context (``traceparent``, ``tracestate``), from its ``_meta`` or headers."""
    bytes_in: int
    started_at: float = field(default_factory=time.time)
    started: float = field(default_factory=time.perf_counter)
    held_s: float = 0.0
    """Seconds the call waited for an approval."""
    arguments: Any = None
    """A ``tools/call``'s or ``prompts/get``'s ``arguments`` as the client sent them (never recorded
    unless a sink opts in, and then only redacted)."""
    answer: Mapping[str, Any] | None = None
    """The JSON-RPC response sent back, set at ``finish`` (same rule as ``arguments``)."""
    state: dict[str, Any] = field(default_factory=dict)
    """What each sink keeps for the call between ``begin`` and ``finish`` (a span, a hold's start)."""
    _telemetry: CallTelemetry | None = None
    _done: bool = False

    def forwarded(self) -> None:
        """The proxy wrote the request to the server (after any approval wait)."""
        if self._telemetry is not None:
            for sink in self._telemetry.sinks:
                sink.forwarded(self)

    def holding(self) -> None:
        """The call starts waiting for an approval."""
        self.state["hold_started"] = time.perf_counter()
        if self._telemetry is not None:
            for sink in self._telemetry.sinks:
                sink.held(self)

    def released(self, verdict: str) -> None:
        """The approval wait ended with ``verdict`` (approved, refused, expired, withdrawn)."""
        began = self.state.pop("hold_started", None)
        if began is not None:
            self.held_s += time.perf_counter() - began
        if self._telemetry is not None:
            for sink in self._telemetry.sinks:
                sink.released(self, verdict)

    def finish(
        self, answer: Mapping[str, Any] | None, outcome: Outcome | None = None, *, size: int = 0
    ) -> None:
        """The call ended: with ``answer`` (the JSON-RPC response sent back; ``size``: its bytes as
        the server wrote it, 0 when the proxy answered), or without one (``outcome`` says why: the
        caller left). Only the first ``finish`` counts."""
        if self._done or self._telemetry is None:
            return
        self._done = True
        self.answer = answer
        if "hold_started" in self.state:
            self.released("withdrawn")
        code, error = None, ""
        if answer is not None:
            outcome, code, error = _judge(answer, outcome)
            if error and self.site.redact is not None:
                error = self.site.redact(error)
            # Cut after redaction: a secret split at the cut would no longer match the redactor.
            error = error[:_MAX_ERROR_CHARS]
        record = CallRecord(
            at=self.started_at,
            duration_s=time.perf_counter() - self.started,
            endpoint=self.site.endpoint,
            server=self.site.server,
            consumer=self.site.consumer,
            agent=self.site.agent,
            session=self.site.session,
            revision=self.site.revision,
            method=self.method,
            target=self.target,
            outcome=outcome or Outcome.OK,
            error_code=code,
            error=error,
            bytes_in=self.bytes_in,
            bytes_out=size,
            held_s=self.held_s,
        )
        for sink in self._telemetry.sinks:
            try:
                sink.finished(self, record)
            except Exception:  # an observer must never break the call it observes
                logger.exception("recording a call to %s failed", self.site.server)


# Not frozen, as nothing changes a record once made: a frozen dataclass's __init__ sets each of
# these fields through object.__setattr__, microseconds on the event loop for every call.
@dataclass(slots=True)
class CallRecord:
    """A finished request: what metrics, the audit trail and the charts are made of."""

    at: float
    """When it arrived (seconds since the epoch)."""
    duration_s: float
    endpoint: str
    server: str
    consumer: str
    agent: str | None
    session: str | None
    revision: str | None
    method: str
    target: str | None
    outcome: Outcome
    error_code: int | None
    error: str
    """The error's message, shortened (never the arguments or the result)."""
    bytes_in: int
    bytes_out: int
    held_s: float


class CallSink(Protocol):
    """Something that learns about calls (spans, metrics, the audit trail)."""

    def begin(self, call: Call) -> None:
        """A request arrived."""
        ...

    def forwarded(self, call: Call) -> None:
        """It was written to the server."""
        ...

    def held(self, call: Call) -> None:
        """It waits for an approval."""
        ...

    def released(self, call: Call, verdict: str) -> None:
        """Its wait for an approval ended."""
        ...

    def finished(self, call: Call, record: CallRecord) -> None:
        """It ended."""
        ...


class CallTelemetry:
    """The sinks every call is reported to; ``begin`` is the proxy's one entry point."""

    def __init__(self, sinks: Sequence[CallSink] = ()) -> None:
        self.sinks: list[CallSink] = list(sinks)

    def add(self, sink: CallSink) -> None:
        """Report calls to ``sink`` too."""
        self.sinks.append(sink)

    def find(self, kind: type[S]) -> S | None:
        """The first sink of type ``kind`` (None: there is none)."""
        return next((sink for sink in self.sinks if isinstance(sink, kind)), None)

    def begin(
        self,
        site: CallSite,
        msg: Mapping[str, Any],
        *,
        size: int = 0,
        headers: Mapping[str, str] | None = None,
    ) -> Call | None:
        """A client's request ``msg`` arrived at ``site`` (``size`` bytes; the HTTP ``headers`` it
        came with, for trace context). None when nothing listens."""
        if not self.sinks:
            return None
        params = msg.get("params")
        params = params if isinstance(params, Mapping) else {}
        method = str(msg.get("method"))
        key = _TARGET_PARAM.get(method)
        target = params.get(key) if key else None
        uri = params.get("uri") if method.startswith("resources/") else None
        call = Call(
            site=site,
            method=method,
            target=target.strip() if isinstance(target, str) else None,
            request_id=msg.get("id"),
            resource_uri=uri if isinstance(uri, str) else None,
            carrier=_carrier(params, headers),
            bytes_in=size,
            arguments=params.get("arguments") if key else None,
            _telemetry=self,
        )
        for sink in self.sinks:
            try:
                sink.begin(call)
            except Exception:
                logger.exception("recording a call to %s failed", site.server)
        return call


def _carrier(params: Mapping[str, Any], headers: Mapping[str, str] | None) -> dict[str, str]:
    """The trace context to continue: the request's own ``_meta`` first (it names this very
    message), else the HTTP request's headers."""
    meta = params.get("_meta")
    found: dict[str, str] = {}
    if isinstance(meta, Mapping):
        found = {k: v for k in TRACE_KEYS if isinstance(v := meta.get(k), str) and len(v) <= 512}
    if "traceparent" not in found and headers is not None:
        found = {k: v for k in TRACE_KEYS if isinstance(v := headers.get(k), str) and len(v) <= 512}
    return found


def _judge(answer: Mapping[str, Any], outcome: Outcome | None) -> tuple[Outcome, int | None, str]:
    error = answer.get("error")
    if isinstance(error, Mapping):
        code = error.get("code")
        message = error.get("message")
        # A bounded window (the proxy's event loop redacts it), wide enough that a secret starting
        # inside the kept part is whole in it when redacted.
        text = message[:_ERROR_WINDOW] if isinstance(message, str) else ""
        return outcome or Outcome.ERROR, code if isinstance(code, int) else None, text
    result = answer.get("result")
    if isinstance(result, Mapping) and result.get("isError") is True:
        return outcome or Outcome.TOOL_ERROR, None, ""
    return outcome or Outcome.OK, None, ""
