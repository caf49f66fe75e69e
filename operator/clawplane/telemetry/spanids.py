"""Span and trace ids chosen before their spans exist.

A call's context goes upstream when the request is written (``params._meta.traceparent``), but
its spans are written only after it ends, on the span worker (``spanwork``). So the ids the
upstream is told are drawn at once, and the spans written later carry them: the span the upstream
names as its parent is the span exported.
"""

from __future__ import annotations

import random

from opentelemetry.trace import INVALID_SPAN_ID, INVALID_TRACE_ID

__all__ = ["new_span_id", "new_trace_id", "traceparent"]


def new_span_id() -> int:
    """A random, valid 64-bit span id."""
    while (span_id := random.getrandbits(64)) == INVALID_SPAN_ID:
        pass
    return span_id


def new_trace_id() -> int:
    """A random, valid 128-bit trace id."""
    while (trace_id := random.getrandbits(128)) == INVALID_TRACE_ID:
        pass
    return trace_id


def traceparent(trace_id: int, span_id: int, sampled: bool) -> str:
    """The W3C ``traceparent`` naming ``span_id`` of ``trace_id``."""
    return f"00-{trace_id:032x}-{span_id:016x}-{'01' if sampled else '00'}"
