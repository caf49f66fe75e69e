"""JSON values as OpenClaw's schema checks them: JSON types, integers, equality, URIs.

Values are what ``json.loads`` and the YAML loader give. ``bool`` is not a number here (JSON
Schema's view, unlike Python's), an integer is any number without a fraction, and equality is
JSON's (``1 == 1.0``, ``True != 1``). ``is_uri`` follows zod's ``url()``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["TYPE_TESTS", "equal", "is_integer", "is_type", "is_uri", "json_type", "never_type"]


def json_type(value: Any) -> str:
    """The JSON Schema type name of ``value`` (``integer`` for whole ints, never for bools)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_type(value: Any, kind: str) -> bool:
    """True when ``value`` is of JSON Schema type ``kind`` (an integer is a number too)."""
    actual = json_type(value)
    if actual == kind:
        return True
    if kind == "number":
        return actual == "integer"
    if kind == "integer":
        return actual == "number" and math.isfinite(value) and float(value).is_integer()
    return False


def is_integer(value: Any) -> bool:
    """A number without a fraction (``2.0`` too), never a bool."""
    if isinstance(value, int):
        return value is not True and value is not False
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: v is True or v is False,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list | tuple),
    "integer": is_integer,
    "number": lambda v: isinstance(v, int | float) and v is not True and v is not False,
    "null": lambda v: v is None,
}
"""JSON Schema's types, tested the way ``is_type`` decides them (one function per type, for speed)."""


def never_type(value: Any) -> bool:
    """The test of a type name the schema does not know: nothing is of it."""
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


def is_uri(value: str) -> bool:
    """zod's ``url()``: a scheme, and a host for the special schemes."""
    # zod's url(): WHATWG URL parsing: a scheme, and a host for the special schemes.
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", value) or any(c.isspace() for c in value.strip()):
        return False
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return False
    return parts.scheme.lower() not in ("http", "https", "ws", "wss", "ftp") or bool(parts.netloc)
