"""Pausing the cyclic garbage collector for one batch of work (a plan, a validation).

A cold plan allocates hundreds of thousands of short-lived objects (YAML nodes, models,
statuses); the collector's generation-0 passes over them cost about a sixth of the plan
and free nothing, since that garbage is acyclic and reference counting already frees it.
The collector is switched off for the batch and back on after it; whatever cycles were
made are collected by its next regular pass. Nesting and threads are counted, so the
collector comes back on only when the last batch ends, and only if it was on before.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["gc_paused"]

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
