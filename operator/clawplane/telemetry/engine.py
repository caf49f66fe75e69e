"""Spans of the engine's work: one per reconcile pass, a child per apply action.

A pass learns whether tracing is on only once it has planned (the Gateway it reads configures
it), so its span opens then, dated from the pass's start; a pass that ends before (an invalid
folder) gets its span at the end. Apply actions run in tasks started under the pass's span and
inherit it through the context.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from opentelemetry.trace import Span, SpanKind, Status, StatusCode, use_span

from clawplane.telemetry.otel import Tracing

__all__ = ["ActionSpan", "PassSpan", "action_span"]


class PassSpan:
    """The span of one reconcile pass (nothing when tracing is off)."""

    def __init__(self, tracing: Tracing | None, trigger: str) -> None:
        self._tracing = tracing
        self._trigger = trigger
        self._started = time.time_ns()
        self._span: Span | None = None

    def open(self) -> None:
        """Start the span now that tracing is configured (dated from the pass's start)."""
        tracer = self._tracing.tracer if self._tracing is not None else None
        if tracer is not None and self._span is None:
            self._span = tracer.start_span(
                "reconcile", kind=SpanKind.INTERNAL, start_time=self._started,
                attributes={"clawplane.reconcile.trigger": self._trigger},
            )  # fmt: skip

    @contextlib.contextmanager
    def current(self) -> Iterator[None]:
        """Make the pass's span the parent of what starts inside (its apply actions)."""
        if self._span is None:
            yield
            return
        with use_span(self._span, end_on_exit=False):
            yield

    def close(self, result: str, *, plan_size: int, duration_s: float, failed: bool) -> None:
        """End the span with what the pass came to."""
        self.open()
        span, self._span = self._span, None
        if span is None:
            return
        span.set_attributes(
            {
                "clawplane.reconcile.result": result,
                "clawplane.reconcile.plan_size": plan_size,
                "clawplane.reconcile.duration_s": round(duration_s, 6),
            }
        )
        if failed:
            span.set_status(Status(StatusCode.ERROR))
        span.end()


class ActionSpan:
    """One apply action's span; ``outcome`` records how it ended."""

    def __init__(self, span: Span | None) -> None:
        self._span = span

    def outcome(self, outcome: str, error: BaseException | None = None) -> None:
        """``ok`` or ``failed`` (the error's type only: its message may quote what a server said)."""
        if self._span is None:
            return
        attributes: dict[str, Any] = {"clawplane.outcome": outcome}
        if error is not None:
            attributes["error.type"] = type(error).__name__
            self._span.set_status(Status(StatusCode.ERROR))
        self._span.set_attributes(attributes)


@contextlib.contextmanager
def action_span(tracing: Tracing | None, kind: str, name: str, action: str) -> Iterator[ActionSpan]:
    """A child span of the current pass for applying ``action`` to ``kind``/``name``."""
    tracer = tracing.tracer if tracing is not None else None
    if tracer is None:
        yield ActionSpan(None)
        return
    attributes = {
        "clawplane.resource.kind": kind,
        "clawplane.resource.name": name,
        "clawplane.action": action,
    }
    with tracer.start_as_current_span(
        f"apply {action} {kind}", kind=SpanKind.INTERNAL, attributes=attributes,
        record_exception=False, set_status_on_exception=False,
    ) as span:  # fmt: skip
        yield ActionSpan(span)
