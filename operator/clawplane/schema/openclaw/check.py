"""Check a value against a node of OpenClaw's config schema; every problem as an ``Issue`` at its path.

``validator`` does the validating (draft-07, as OpenClaw prints it); this module turns its failures
into what a person fixes: an unknown key with a "did you mean", an enum with its allowed
values, the branch of a union the value was evidently meant for (OpenClaw's zod unions are
``anyOf`` lists: a string or a SecretRef, a string or ``{primary, fallbacks}``), never the
raw "is not valid under any of the given schemas".

Values whose real content is only known when OpenClaw reads the file (a ``${VAR}``
substitution, a clawplane ``valueFrom`` reference standing in for a string) are passed as
``deferred`` paths: nothing is reported about the value at exactly those paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from clawplane._utils.didyoumean import did_you_mean
from clawplane.jscompat import json_type
from clawplane.schema.openclaw import Node, branches, types_of
from clawplane.schema.openclaw.validator import Failure, failures

PathT = tuple[str | int, ...]

_TYPE_WORDS = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "a boolean",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
}


@dataclass(frozen=True, slots=True)
class Issue:
    """One thing OpenClaw's schema refuses."""

    path: PathT
    """Where, relative to the checked value."""
    kind: str
    """``unknown-key``, ``missing-key``, ``type``, ``enum``, ``range``, ``format`` or ``invalid``."""
    message: str
    hint: str = ""
    at_key: bool = False
    """The key itself is wrong (point at the key, not its value)."""


def check(value: Any, node: Node, *, deferred: Iterable[PathT] = ()) -> list[Issue]:
    """Every issue of ``value`` against ``node``; nothing about values at ``deferred`` paths."""
    errors = failures(value, node)
    if not errors:
        return []
    out: list[Issue] = []
    for error in errors:
        out.extend(_translate(error))
    skip = set(deferred)
    seen: set[tuple[PathT, str]] = set()
    kept: list[Issue] = []
    for issue in out:
        if issue.path in skip or (issue.path, issue.message) in seen:
            continue
        seen.add((issue.path, issue.message))
        kept.append(issue)
    return kept


def is_valid(value: Any, node: Node) -> bool:
    """Whether OpenClaw's schema takes ``value`` here."""
    return not failures(value, node)


def _translate(error: Failure) -> list[Issue]:
    path = error.path
    kind = error.keyword
    inst = error.value
    schema = error.schema
    if kind == "additionalProperties":
        return _unknown_keys(inst, schema, path)
    if kind == "required":
        return [
            Issue((*path, name), "missing-key", f"missing required key {name!r}", f"add {name}:")
            for name in error.expected
        ]
    if kind == "type":
        expected = error.expected
        kinds = [expected] if isinstance(expected, str) else list(expected)
        return [Issue(path, "type", f"expected {_words(kinds)}, got {describe_value(inst)}")]
    if kind in ("enum", "const"):
        allowed = list(error.expected) if kind == "enum" else [error.expected]
        return [_enum_issue(path, inst, allowed)]
    if kind in ("anyOf", "oneOf"):
        return _union(error, path)
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        words = {
            "minimum": "at least",
            "maximum": "at most",
            "exclusiveMinimum": "greater than",
            "exclusiveMaximum": "less than",
        }[kind]
        return [Issue(path, "range", f"must be {words} {error.expected}, got {inst!r}")]
    if kind == "minLength":
        if error.expected == 1:
            return [Issue(path, "range", "must not be empty", "give a value, or remove the key")]
        return [Issue(path, "range", f"must have at least {error.expected} characters")]
    if kind == "maxLength":
        most = error.expected
        return [Issue(path, "range", f"must have at most {most} characters, got {len(inst)}")]
    if kind == "minItems":
        if error.expected == 1:
            return [Issue(path, "range", "must not be empty", "give at least one item, or remove the key")]
        return [Issue(path, "range", f"needs at least {error.expected} items, got {len(inst)}")]
    if kind == "maxItems":
        return [Issue(path, "range", f"takes at most {error.expected} items, got {len(inst)}")]
    if kind in ("minProperties", "maxProperties"):
        words = "at least" if kind == "minProperties" else "at most"
        return [Issue(path, "range", f"needs {words} {error.expected} entries, got {len(inst)}")]
    if kind == "uniqueItems":
        return [Issue(path, "invalid", "items must be unique", "remove the repeated items")]
    if kind == "pattern":
        return [
            Issue(
                path,
                "format",
                f"invalid value {_short(inst)}: does not match {error.expected}",
                "write a value of the form the pattern describes",
            )
        ]
    if kind == "format":
        what = {"uri": "a URL", "email": "an email address", "date-time": "an RFC 3339 date-time"}
        wanted = what.get(str(error.expected), "valid")
        return [Issue(path, "format", f"invalid value {_short(inst)}: not {wanted}")]
    if kind == "propertyNames":
        return [Issue(path, "unknown-key", f"invalid key {_short(inst)}: {_key_rule(error)}", "", True)]
    if kind == "not":
        return [Issue(path, "invalid", f"value {_short(inst)} is not allowed here")]
    if kind == "false":
        return [Issue(path, "invalid", "OpenClaw takes nothing here", "remove it")]
    return [Issue(path, "invalid", f"fails OpenClaw's {kind} rule")]


def _key_rule(error: Failure) -> str:
    sub = error.context[0] if error.context else None
    if sub is not None and sub.keyword == "pattern":
        return f"keys here must match {sub.expected}"
    if sub is not None and sub.keyword in ("enum", "const"):
        return "keys here must be one of " + ", ".join(map(_short, _as_list(sub.expected)))
    return "OpenClaw refuses this key"


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def _unknown_keys(inst: Any, schema: Node, path: PathT) -> list[Issue]:
    if not isinstance(inst, dict):
        return []
    known = list(schema.get("properties", {}) or {})
    patterns = [re.compile(p) for p in (schema.get("patternProperties") or {})]
    out = []
    for key in inst:
        if key in known or any(p.search(key) for p in patterns):
            continue
        out.append(Issue((*path, key), "unknown-key", f"unknown key {key!r}", key_hint(key, known), True))
    return out


def key_hint(key: str, known: Sequence[str]) -> str:
    """A "did you mean" for a mistyped key, else the keys allowed there."""
    guess = did_you_mean(key, known)
    if guess:
        return f"did you mean {guess!r}?"
    if not known:
        return "remove it"
    shown = ", ".join(known[:25]) + (f", … ({len(known)} in all)" if len(known) > 25 else "")
    return f"allowed keys here: {shown}"


def _enum_issue(path: PathT, inst: Any, allowed: Sequence[Any]) -> Issue:
    shown = ", ".join(_short(v) for v in allowed[:12])
    if len(allowed) > 12:
        shown += f", … ({len(allowed)} in all)"
    guess = did_you_mean(inst, [a for a in allowed if isinstance(a, str)]) if isinstance(inst, str) else None
    hint = f"did you mean {guess!r}?" if guess else f"use one of {shown}"
    if len(allowed) == 1:
        return Issue(path, "enum", f"invalid value {_short(inst)}: must be {shown}", hint)
    return Issue(path, "enum", f"invalid value {_short(inst)}: expected one of {shown}", hint)


def _constants(node: Node) -> list[Any] | None:
    """The values of a union made only of constants (zod's enums and literal unions), else None."""
    values: list[Any] = []
    for branch in branches(node):
        if "const" in branch:
            values.append(branch["const"])
        elif isinstance(branch.get("enum"), list):
            values.extend(branch["enum"])
        else:
            return None
    return values


def _union(error: Failure, path: PathT) -> list[Issue]:
    node = error.schema
    inst = error.value
    constants = _constants(node)
    if constants is not None:
        return [_enum_issue(path, inst, constants)]
    alternatives = error.expected if isinstance(error.expected, list) else []
    if error.keyword == "oneOf" and not error.context:
        return [Issue(path, "invalid", "the value matches more than one of the forms OpenClaw takes here")]
    by_branch: dict[int, list[Failure]] = {}
    for sub in error.context:
        by_branch.setdefault(sub.branch, []).append(sub)
    fitting = [i for i, alt in enumerate(alternatives) if isinstance(alt, dict) and _fits(inst, alt)]
    if not fitting and isinstance(inst, dict):
        tags = _tags(alternatives)
        if tags is not None:
            key, values = tags
            if key in inst:
                # The value names a variant that does not exist: the mistake is its tag.
                return [_enum_issue((*path, key), inst[key], values)]
            other = [k for k in types_of(node) if k != "object"]
            also = f"{_words(other)}, or " if other else ""
            shown = ", ".join(repr(v) for v in values)
            said = f"expected {also}a mapping with {key}: one of {shown}; got a mapping without {key}"
            return [Issue(path, "type", said)]
    if not fitting:
        kinds = sorted(types_of(node), key=list(_TYPE_WORDS).index) if types_of(node) else []
        if kinds:
            return [Issue(path, "type", f"expected {_words(kinds)}, got {describe_value(inst)}")]
        return [Issue(path, "invalid", f"{describe_value(inst)} is not one of the forms OpenClaw takes here")]
    # The branch the value was meant for: the one whose complaints sit deepest, then fewest.
    best = min(
        fitting,
        key=lambda i: (
            -max((len(e.path) for e in by_branch.get(i, [])), default=0),
            len(by_branch.get(i, [])),
        ),
    )
    found: list[Issue] = []
    for sub in by_branch.get(best, []):
        found.extend(_translate(sub))
    return found or [Issue(path, "invalid", "the value does not fit what OpenClaw takes here")]


def _tags(alternatives: Sequence[Any]) -> tuple[str, list[Any]] | None:
    """``(key, values)`` when a union's object variants are told apart by one constant key."""
    key: str | None = None
    values: list[Any] = []
    for alternative in alternatives:
        for branch in branches(alternative) if isinstance(alternative, dict) else []:
            if "object" not in types_of(branch):
                continue
            tagged = [
                (k, sub["const"])
                for k, sub in (branch.get("properties") or {}).items()
                if isinstance(sub, dict) and "const" in sub and k in (branch.get("required") or [])
            ]
            if not tagged or (key is not None and tagged[0][0] != key):
                return None
            key = tagged[0][0]
            values.append(tagged[0][1])
    return (key, list(dict.fromkeys(values))) if key is not None else None


def _fits(inst: Any, alternative: Node) -> bool:
    """Whether ``inst`` has a JSON type the alternative takes (and, for objects, its discriminator)."""
    kinds = types_of(alternative)
    actual = json_type(inst)
    if kinds and actual not in kinds and not (actual == "integer" and "number" in kinds):
        return False
    if actual == "object":
        # A tagged variant ({type: "acp", …}) fits only a value carrying its tag.
        return any(_tag_matches(inst, branch) for branch in branches(alternative))
    return True


def _tag_matches(inst: dict[str, Any], branch: Node) -> bool:
    for key, sub in (branch.get("properties") or {}).items():
        tag = isinstance(sub, dict) and "const" in sub and key in (branch.get("required") or [])
        if tag and inst.get(key) != sub["const"]:
            return False
    return True


def _words(kinds: Sequence[str]) -> str:
    words = list(dict.fromkeys(_TYPE_WORDS.get(k, k) for k in kinds))
    if "a number" in words and "an integer" in words:
        words.remove("an integer")
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def describe_value(value: Any) -> str:
    """A value as a diagnostic names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) < 40 else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _short(value: Any) -> str:
    if isinstance(value, str):
        return repr(value) if len(value) < 60 else repr(value[:57] + "...")
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict | list):
        return describe_value(value)
    return repr(value)


__all__ = ["Issue", "PathT", "check", "describe_value", "did_you_mean", "is_valid", "key_hint"]
