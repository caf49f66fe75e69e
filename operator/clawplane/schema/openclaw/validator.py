"""A JSON Schema (draft-07) validator for OpenClaw's config schema, compiled to closures node by node.

Why not jsonschema: importing it costs a `clawplane validate` run about a fifth of its
parse time, and its per-node overhead another as much on a folder of a thousand resources.
OpenClaw's schema uses a small, fixed set of keywords (zod's output), listed in ``KEYWORDS``;
each node is compiled once, on first use, into one function that checks a value and
collects ``Failure``s shaped as ``check`` reports them. A test runs jsonschema beside it on
drawn values and both must agree.

Where zod and JSON Schema differ, OpenClaw's behaviour wins: a key with a ``default`` is not
required (zod fills it in), and string lengths count UTF-16 code units (JavaScript's
``length``), not code points.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clawplane.jscompat import utf16_len
from clawplane.schema.openclaw.values import (
    TYPE_TESTS,
    equal,
    is_uri,
    never_type,
)

Node = dict[str, Any]
PathT = tuple[str | int, ...]

KEYWORDS = frozenset({
    "type", "properties", "additionalProperties", "required", "const", "enum", "anyOf", "oneOf", "allOf",
    "items", "additionalItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
    "maxLength", "pattern", "format", "propertyNames", "not", "if", "then", "else", "uniqueItems", "minItems",
    "maxItems", "minProperties", "maxProperties", "multipleOf",
    # annotations, no effect on validity
    "title", "description", "default", "$schema", "examples", "readOnly", "writeOnly", "deprecated",
    "$comment",
})  # fmt: skip


@dataclass(slots=True)
class Failure:
    """One keyword a value failed, where, and (for unions) why each alternative failed."""

    keyword: str
    expected: Any
    """The keyword's value in the schema (the enum's values, the minimum, …)."""
    value: Any
    path: PathT
    schema: Node
    context: list[Failure] = field(default_factory=list)
    branch: int = -1
    """For a failure inside a union: which alternative it belongs to."""


Check = Callable[[Any, PathT, list[Failure]], bool]


_FORMATS: dict[str, Callable[[str], bool]] = {"uri": is_uri}
"""Formats checked here; the others OpenClaw's schema names come with a ``pattern`` that checks them."""

_compiled: dict[int, tuple[Node, Check]] = {}
_patterns: dict[str, re.Pattern[str] | None] = {}
_lock = threading.Lock()


def compiled(node: Node) -> Check:
    """The check of ``node`` (compiled on first use, then shared)."""
    hit = _compiled.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    made = _compile(node)
    with _lock:
        _compiled[id(node)] = (node, made)
    return made


def failures(value: Any, node: Node) -> list[Failure]:
    """Every failure of ``value`` against ``node`` (empty when valid)."""
    found: list[Failure] = []
    compiled(node)(value, (), found)
    return found


def _pattern(text: str) -> re.Pattern[str] | None:
    if text not in _patterns:
        try:
            _patterns[text] = re.compile(text)
        except re.error:
            _patterns[text] = None  # a JavaScript-only construct: nothing to check here
    return _patterns[text]


def _lazy(node: Any) -> Check:
    """A check of a sub-node, compiled when first reached (the schema is large; most is never used)."""
    if not isinstance(node, dict):
        if node is False:
            return _never
        return _always
    slot: list[Check] = []

    def run(value: Any, path: PathT, out: list[Failure]) -> bool:
        if not slot:
            slot.append(compiled(node))
        return slot[0](value, path, out)

    return run


def _always(value: Any, path: PathT, out: list[Failure]) -> bool:
    return True


def _never(value: Any, path: PathT, out: list[Failure]) -> bool:
    out.append(Failure("false", False, value, path, {}))
    return False


def _compile(node: Node) -> Check:
    checks: list[Check] = []
    kind = node.get("type")
    if kind is not None:
        tests = [TYPE_TESTS.get(k, never_type) for k in ([kind] if isinstance(kind, str) else kind)]
        single = tests[0] if len(tests) == 1 else None

        def check_type(value: Any, path: PathT, out: list[Failure]) -> bool:
            if single(value) if single is not None else any(test(value) for test in tests):
                return True
            out.append(Failure("type", kind, value, path, node))
            return False

        checks.append(check_type)
    if "const" in node:
        const = node["const"]

        def check_const(value: Any, path: PathT, out: list[Failure]) -> bool:
            if equal(value, const):
                return True
            out.append(Failure("const", const, value, path, node))
            return False

        checks.append(check_const)
    if isinstance(node.get("enum"), list):
        options = node["enum"]

        def check_enum(value: Any, path: PathT, out: list[Failure]) -> bool:
            if any(equal(value, o) for o in options):
                return True
            out.append(Failure("enum", options, value, path, node))
            return False

        checks.append(check_enum)
    checks.extend(_numbers(node))
    checks.extend(_strings(node))
    checks.extend(_objects(node))
    checks.extend(_arrays(node))
    checks.extend(_combinators(node))
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    first, rest = checks[0], checks[1:]
    typed = kind is not None

    def run(value: Any, path: PathT, out: list[Failure]) -> bool:
        ok = first(value, path, out)
        if not ok and typed:
            return False  # a wrong type says it all
        for check in rest:
            ok = check(value, path, out) and ok
        return ok

    return run


def _numbers(node: Node) -> list[Check]:
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


def _strings(node: Node) -> list[Check]:
    checks: list[Check] = []
    low, high = node.get("minLength"), node.get("maxLength")
    if isinstance(low, int) or isinstance(high, int):

        def check_length(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, str):
                return True
            size = utf16_len(value)
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
    test = _FORMATS.get(str(node.get("format")))
    if test is not None:
        name = node["format"]

        def check_format(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, str) or test(value):
                return True
            out.append(Failure("format", name, value, path, node))
            return False

        checks.append(check_format)
    return checks


def _objects(node: Node) -> list[Check]:
    checks: list[Check] = []
    found = node.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    extra = node.get("additionalProperties", True)
    if props or extra is not True:
        prop_checks = {k: _lazy(v) for k, v in props.items()}
        extra_check = _lazy(extra) if isinstance(extra, dict) and extra else None
        forbid = extra is False

        def check_properties(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, dict):
                return True
            ok = True
            unknown = False
            for key, item in value.items():
                sub = prop_checks.get(key)
                if sub is not None:
                    ok = sub(item, (*path, key), out) and ok
                elif forbid:
                    unknown = True
                elif extra_check is not None:
                    ok = extra_check(item, (*path, key), out) and ok
            if unknown:
                out.append(Failure("additionalProperties", False, value, path, node))
                ok = False
            return ok

        checks.append(check_properties)
    required = node.get("required")
    if isinstance(required, list) and required:
        # zod prints a key with a default as required, though OpenClaw's input may leave it out.
        needed = [r for r in required if not (isinstance(props.get(r), dict) and "default" in props[r])]
        if needed:

            def check_required(value: Any, path: PathT, out: list[Failure]) -> bool:
                if not isinstance(value, dict):
                    return True
                missing = [r for r in needed if r not in value]
                if missing:
                    out.append(Failure("required", missing, value, path, node))
                    return False
                return True

            checks.append(check_required)
    names = node.get("propertyNames")
    if isinstance(names, dict) and names:
        name_check = _lazy(names)

        def check_names(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, dict):
                return True
            ok = True
            for key in value:
                inner: list[Failure] = []
                if not name_check(key, (*path, key), inner):
                    out.append(Failure("propertyNames", names, key, (*path, key), node, inner))
                    ok = False
            return ok

        checks.append(check_names)
    low, high = node.get("minProperties"), node.get("maxProperties")
    if isinstance(low, int) or isinstance(high, int):

        def check_count(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, dict):
                return True
            if isinstance(low, int) and len(value) < low:
                out.append(Failure("minProperties", low, value, path, node))
                return False
            if isinstance(high, int) and len(value) > high:
                out.append(Failure("maxProperties", high, value, path, node))
                return False
            return True

        checks.append(check_count)
    return checks


def _arrays(node: Node) -> list[Check]:
    checks: list[Check] = []
    spec = node.get("items")
    if isinstance(spec, dict) and spec:
        item_check = _lazy(spec)

        def check_items(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, list | tuple):
                return True
            ok = True
            for i, item in enumerate(value):
                ok = item_check(item, (*path, i), out) and ok
            return ok

        checks.append(check_items)
    elif isinstance(spec, list):
        tuple_checks = [_lazy(s) for s in spec]
        rest = node.get("additionalItems", True)
        rest_check = _lazy(rest) if rest is not True else None

        def check_tuple(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, list | tuple):
                return True
            ok = True
            for i, item in enumerate(value):
                sub = tuple_checks[i] if i < len(tuple_checks) else rest_check
                if sub is not None:
                    ok = sub(item, (*path, i), out) and ok
            return ok

        checks.append(check_tuple)
    low, high = node.get("minItems"), node.get("maxItems")
    if isinstance(low, int) or isinstance(high, int):

        def check_size(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, list | tuple):
                return True
            if isinstance(low, int) and len(value) < low:
                out.append(Failure("minItems", low, value, path, node))
                return False
            if isinstance(high, int) and len(value) > high:
                out.append(Failure("maxItems", high, value, path, node))
                return False
            return True

        checks.append(check_size)
    if node.get("uniqueItems") is True:

        def check_unique(value: Any, path: PathT, out: list[Failure]) -> bool:
            if not isinstance(value, list | tuple):
                return True
            for i, a in enumerate(value):
                if any(equal(a, b) for b in value[i + 1 :]):
                    out.append(Failure("uniqueItems", True, value, path, node))
                    return False
            return True

        checks.append(check_unique)
    return checks


def _combinators(node: Node) -> list[Check]:
    checks: list[Check] = []
    for keyword in ("anyOf", "oneOf"):
        options = node.get(keyword)
        if isinstance(options, list) and options:
            checks.append(_union(node, keyword, [_lazy(o) for o in options]))
    every = node.get("allOf")
    if isinstance(every, list) and every:
        parts = [_lazy(o) for o in every]

        def check_all(value: Any, path: PathT, out: list[Failure]) -> bool:
            ok = True
            for part in parts:
                ok = part(value, path, out) and ok
            return ok

        checks.append(check_all)
    negated = node.get("not")
    if isinstance(negated, dict):
        inner_check = _lazy(negated)

        def check_not(value: Any, path: PathT, out: list[Failure]) -> bool:
            if inner_check(value, path, []):
                out.append(Failure("not", negated, value, path, node))
                return False
            return True

        checks.append(check_not)
    condition = node.get("if")
    if isinstance(condition, dict):
        test = _lazy(condition)
        then = _lazy(node["then"]) if isinstance(node.get("then"), dict) else _always
        other = _lazy(node["else"]) if isinstance(node.get("else"), dict) else _always

        def check_if(value: Any, path: PathT, out: list[Failure]) -> bool:
            return then(value, path, out) if test(value, path, []) else other(value, path, out)

        checks.append(check_if)
    return checks


def _union(node: Node, keyword: str, options: list[Check]) -> Check:
    exactly_one = keyword == "oneOf"

    def check_union(value: Any, path: PathT, out: list[Failure]) -> bool:
        context: list[Failure] = []
        passed = 0
        for index, option in enumerate(options):
            inner: list[Failure] = []
            if option(value, path, inner):
                passed += 1
                if not exactly_one:
                    return True
            else:
                for failure in inner:
                    failure.branch = index
                context.extend(inner)
        if passed == 1 or (passed and not exactly_one):
            return True
        out.append(Failure(keyword, node[keyword], value, path, node, [] if passed else context))
        return False

    return check_union


__all__ = ["KEYWORDS", "Failure", "compiled", "failures"]
