"""Compact JSON text from encoders built once.

``json.dumps`` with any option builds a new ``JSONEncoder`` for every call, which costs more
than encoding a small value. Hot paths (every skill's manifest and status, every resource of
a compile, every proxied MCP message) encode through these instead: same text, no set-up.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["canonical", "compact"]

_SEPARATORS = (",", ":")
_ENCODERS = {
    (sort_keys, ascii_only): json.JSONEncoder(
        sort_keys=sort_keys, ensure_ascii=ascii_only, separators=_SEPARATORS
    )
    for sort_keys in (False, True)
    for ascii_only in (False, True)
}
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=_SEPARATORS, default=str)


def compact(value: Any, *, sort_keys: bool = False, ascii_only: bool = False) -> str:
    """``json.dumps(value, separators=(",", ":"), ...)``, non-ASCII kept unless ``ascii_only``."""
    return _ENCODERS[sort_keys, ascii_only].encode(value)


def canonical(value: Any) -> str:
    """Sorted compact text with non-JSON values as ``str()``: the form config hashes are taken of."""
    return _CANONICAL.encode(value)
