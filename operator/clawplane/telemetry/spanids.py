"""Span and trace ids chosen before their spans exist.

A call's context goes upstream when the request is written (``params._meta.traceparent``), but
its spans are made only after it ends, on the span worker (``spanwork``). So the ids the upstream
is told are drawn at once (``new_span_id``), and the worker hands them to the SDK as it starts
each span (``PresetIds.preset``): the span the upstream names as its parent is the span exported.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry.trace import INVALID_SPAN_ID, INVALID_TRACE_ID

__all__ = ["PresetIds", "new_span_id", "new_trace_id", "traceparent"]


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


class PresetIds:
    """Random ids as the SDK's ``RandomIdGenerator`` draws them, except for the next span started
    under ``preset`` on this thread (the SDK's ``IdGenerator`` interface; no subclass, so the SDK
    loads only once traces are on)."""

    def __init__(self) -> None:
        self._local = threading.local()

    @contextmanager
    def preset(self, span_id: int, trace_id: int | None = None) -> Iterator[None]:
        """The next span started in this block gets ``span_id`` (and ``trace_id`` when it is a root)."""
        self._local.span_id, self._local.trace_id = span_id, trace_id
        try:
            yield
        finally:
            self._local.span_id = self._local.trace_id = None

    def generate_span_id(self) -> int:
        """The preset span id once, else a random one."""
        span_id = getattr(self._local, "span_id", None)
        if span_id is None:
            return new_span_id()
        self._local.span_id = None
        return int(span_id)

    def is_trace_id_random(self) -> bool:
        """Trace ids are random (W3C's random flag), preset ones too: they come from ``new_trace_id``."""
        return True

    def generate_trace_id(self) -> int:
        """The preset trace id once, else a random one."""
        trace_id = getattr(self._local, "trace_id", None)
        if trace_id is None:
            return new_trace_id()
        self._local.trace_id = None
        return int(trace_id)
