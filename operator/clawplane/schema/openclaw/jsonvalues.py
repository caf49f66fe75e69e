"""JSON values as OpenClaw's schema (zod, JavaScript) sees them: types, equality, lengths, formats.

1 == 1.0 but true is not 1; string lengths count UTF-16 code units; a ``uri`` parses as
WHATWG URLs do (a host for the special schemes).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from clawplane.jscompat.utf16 import utf16_len as utf16_length  # JavaScript's string ``length``

__all__ = ["FORMATS", "TYPE_TESTS", "equal", "never_type", "utf16_length"]


def _is_integer(value: Any) -> bool:
    if isinstance(value, int):
        return value is not True and value is not False
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: v is True or v is False,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list | tuple),
    "integer": _is_integer,
    "number": lambda v: isinstance(v, int | float) and v is not True and v is not False,
    "null": lambda v: v is None,
}
"""JSON Schema's types, one test each (for speed): an integral float is an integer, a boolean no number."""


def never_type(value: Any) -> bool:
    """The test of a type JSON Schema does not have: nothing is of it."""
    return False


def equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1 and "1" is not 1."""
    if type(a) is str or type(b) is str:
        return type(a) is type(b) and a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    numbers = (isinstance(a, int | float), isinstance(b, int | float))
    if any(numbers):
        return all(numbers) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _is_uri(value: str) -> bool:
    # zod's url(): WHATWG URL parsing: a scheme, and a host for the special schemes.
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", value) or any(c.isspace() for c in value.strip()):
        return False
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return False
    return parts.scheme.lower() not in ("http", "https", "ws", "wss", "ftp") or bool(parts.netloc)


FORMATS: dict[str, Callable[[str], bool]] = {"uri": _is_uri}
"""Formats checked here; the others OpenClaw's schema names come with a ``pattern`` that checks them."""
