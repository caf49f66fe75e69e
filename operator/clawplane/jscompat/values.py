"""JavaScript value semantics that OpenClaw's skill loader relies on.

OpenClaw turns YAML and JSON values into strings with ``String(value)`` and
``JSON.stringify``; numbers print the JavaScript way (``1.0`` is ``"1"``, ``1e21``
is ``"1e+21"``), arrays join with commas, and object keys that look like array
indexes come first. Values here are what ``yaml``'s ``toJS`` and ``JSON.parse``
produce, in Python clothes: ``None``, ``bool``, ``float``, ``str``, ``list``, ``dict``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from clawplane._utils.compactjson import compact
from clawplane.jscompat.strings import js_trim

__all__ = [
    "js_number",
    "js_object_keys",
    "js_string",
    "js_truthy_string",
    "json_stringify",
    "json_type",
    "normalize_string_list",
]

_MAX_ARRAY_INDEX = 4294967294


def js_number(value: float | int) -> str:
    """``String(n)`` for a JavaScript number (ints beyond 2**53 lose precision, as in JS)."""
    x = float(value)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    digits, exponent = _shortest_digits(abs(x))
    return sign + _format_digits(digits, exponent)


def _shortest_digits(x: float) -> tuple[str, int]:
    """Shortest round-trip digits and ``n`` such that ``x = 0.digits × 10**n``."""
    tup = Decimal(repr(x)).as_tuple()
    raw = "".join(str(d) for d in tup.digits)
    digits = raw.rstrip("0") or "0"
    assert isinstance(tup.exponent, int)
    exponent = tup.exponent + len(raw) - len(digits)
    return digits, exponent + len(digits)


def _format_digits(digits: str, n: int) -> str:
    """ECMAScript Number::toString layout for ``0.digits × 10**n``."""
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    exp = n - 1
    mark = f"e{'+' if exp >= 0 else '-'}{abs(exp)}"
    return (digits if k == 1 else digits[0] + "." + digits[1:]) + mark


def json_type(value: Any) -> str:
    """The JSON Schema type of a parsed JSON value: ``null``, ``boolean``, ``integer``, ``number``,
    ``string``, ``array`` or ``object`` (a float is a ``number`` even when whole, as JSON wrote it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list | tuple) else "object"


def js_string(value: Any) -> str:
    """``String(value)`` for a JSON-like value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        # Array.prototype.join renders null and undefined elements as empty strings.
        return ",".join("" if item is None else js_string(item) for item in value)
    return "[object Object]"


def js_object_keys(obj: dict[str, Any]) -> list[str]:
    """Own-property order of a JS object: array-index keys ascending, then insertion order."""
    index_keys = sorted((k for k in obj if _is_array_index(k)), key=int)
    return index_keys + [k for k in obj if not _is_array_index(k)]


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) <= _MAX_ARRAY_INDEX


_SLOW = object()
_EXACT_INT = 2**53


def json_stringify(value: Any) -> str:
    """Compact ``JSON.stringify(value)``; non-finite numbers become ``null`` as in JS."""
    ready = _json_ready(value)
    if ready is not _SLOW:  # Python's C encoder gives the same text for these values
        return compact(ready)
    return "".join(_stringify_parts(value))


def _json_ready(value: Any) -> Any:
    """``value`` with numbers Python prints as JavaScript does, or ``_SLOW`` when it cannot."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < _EXACT_INT else _SLOW
    if isinstance(value, float):
        if value.is_integer() and abs(value) < _EXACT_INT:
            return int(value)
        return value if math.isfinite(value) and repr(value) == js_number(value) else _SLOW
    if isinstance(value, list):
        items = [_json_ready(item) for item in value]
        return _SLOW if any(item is _SLOW for item in items) else items
    if isinstance(value, dict):
        if any(_is_array_index(key) for key in value):
            return _SLOW  # JS puts index-like keys first
        ready = {key: _json_ready(item) for key, item in value.items()}
        return _SLOW if any(item is _SLOW for item in ready.values()) else ready
    return _SLOW


def _stringify_parts(value: Any) -> Iterable[str]:
    if value is None or value is True or value is False:
        yield js_string(value)
    elif isinstance(value, int | float):
        yield js_number(value) if math.isfinite(float(value)) else "null"
    elif isinstance(value, str):
        yield json.dumps(value, ensure_ascii=False)
    elif isinstance(value, list):
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ","
            yield from _stringify_parts(item)
        yield "]"
    elif isinstance(value, dict):
        yield "{"
        for index, key in enumerate(js_object_keys(value)):
            if index:
                yield ","
            yield json.dumps(key, ensure_ascii=False) + ":"
            yield from _stringify_parts(value[key])
        yield "}"
    else:
        yield "null"


def js_truthy_string(value: Any) -> str | None:
    """JavaScript ``value.trim()`` when ``value`` is a non-blank string, else ``None``."""
    if not isinstance(value, str):
        return None
    trimmed = js_trim(value)
    return trimmed or None


def normalize_string_list(value: Any) -> tuple[str, ...]:
    """OpenClaw's list fields: an array (``String()``-ed, trimmed, blanks dropped) or a CSV string."""
    if isinstance(value, list):
        entries = (js_trim(js_string(entry)) for entry in value)
        return tuple(entry for entry in entries if entry)
    if isinstance(value, str):
        return tuple(part for part in (js_trim(p) for p in value.split(",")) if part)
    return ()
