"""The checks of number and string keywords (bounds, ``multipleOf``, lengths, ``pattern``, ``format``).

They check a value by itself, without sub-schemas; the compiler (``validator``) adds them to a
node's check.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from clawplane.schema.openclaw.failure import Check, Failure, Node, PathT
from clawplane.schema.openclaw.jsonvalues import FORMATS, utf16_length

__all__ = ["number_checks", "string_checks"]

_patterns: dict[str, re.Pattern[str] | None] = {}


def _pattern(text: str) -> re.Pattern[str] | None:
    if text not in _patterns:
        try:
            _patterns[text] = re.compile(text)
        except re.error:
            _patterns[text] = None  # a JavaScript-only construct: nothing to check here
    return _patterns[text]


def number_checks(node: Node) -> list[Check]:
    """The checks of ``node``'s number bounds and ``multipleOf``."""
    checks: list[Check] = []
    for keyword, test in (
        ("minimum", lambda v, b: v >= b),
        ("maximum", lambda v, b: v <= b),
        ("exclusiveMinimum", lambda v, b: v > b),
        ("exclusiveMaximum", lambda v, b: v < b),
        ("multipleOf", lambda v, b: (v / b).is_integer() if isinstance(v / b, float) else True),
    ):
        bound = node.get(keyword)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            checks.append(_number_check(node, keyword, bound, test))
    return checks


def _number_check(node: Node, keyword: str, bound: float, test: Callable[[Any, Any], bool]) -> Check:
    def check(value: Any, path: PathT, out: list[Failure]) -> bool:
        if not isinstance(value, int | float) or isinstance(value, bool) or test(value, bound):
            return True
        out.append(Failure(keyword, bound, value, path, node))
        return False

    return check


def string_checks(node: Node) -> list[Check]:
    """The checks of ``node``'s string length, ``pattern`` and ``format``."""
    checks: list[Check] = []
    low, high = node.get("minLength"), node.get("maxLength")
    if isinstance(low, int) or isinstance(high, int):

        def check_length(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, str):
                return True
            size = utf16_length(value)
            if isinstance(low, int) and size < low:
                out.append(Failure("minLength", low, value, path, node))
                return False
            if isinstance(high, int) and size > high:
                out.append(Failure("maxLength", high, value, path, node))
                return False
            return True

        checks.append(check_length)
    if isinstance(node.get("pattern"), str):
        text = node["pattern"]
        regex = _pattern(text)
        if regex is not None:

            def check_pattern(value: Any, path: PathT, out: list[Failure]) -> bool:
                if not isinstance(value, str) or regex.search(value):
                    return True
                out.append(Failure("pattern", text, value, path, node))
                return False

            checks.append(check_pattern)
    test = FORMATS.get(str(node.get("format")))
    if test is not None:
        name = node["format"]

        def check_format(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, str) or test(value):
                return True
            out.append(Failure("format", name, value, path, node))
            return False

        checks.append(check_format)
    return checks
