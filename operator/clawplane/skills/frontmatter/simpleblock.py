"""A fast path for the frontmatter most skills have: ``key: value`` lines, maybe nested.

Composing YAML costs far more than the text warrants for blocks like::

    name: weather
    description: Get the forecast.
    metadata: {"openclaw": {"requires": {"bins": ["curl"]}}}

or the same manifest written as a block mapping::

    metadata:
      openclaw:
        emoji: "🌦"
        requires:
          bins: [curl, jq]

When every line is a key with a plain, quoted, one-line JSON or simple flow-sequence
value that YAML cannot read any other way, or a key opening a more-indented block
mapping of such lines, the result YAML (and OpenClaw) would give is computed directly.
Anything else (blank or comment lines inside a block, uneven indentation, tabs,
anchors, tags, block scalars, sequences of ``-`` items, flow values that are neither
JSON nor plain words, duplicate keys…) returns ``None`` and takes the full path. The
differential tests run both paths against each other and against OpenClaw.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clawplane.jscompat import js_string, js_trim, json_stringify
from clawplane.skills.frontmatter.yamlvalues import resolve_plain

__all__ = ["parse_simple_block"]

_LINE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*): +(\S.*)")
_OPENER = re.compile(r"([A-Za-z][A-Za-z0-9_-]*): *")
_KEYWORDS = frozenset({"null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"})
_PLAIN_START_BAD = frozenset("-?:,[]{}#&*!|>'\"%@`")
# Printable per YAML 1.2, minus what could change the meaning of a plain scalar here.
_UNSAFE = re.compile(
    "[^\\x20-\\x7e\\xa0-\\ud7ff\\ue000-\\ufffd\\U00010000-\\U0010ffff]|[\\[\\]{}]|: | #|:$|\\u2028|\\u2029"
)
_UNSAFE_QUOTED = re.compile(
    "[^\\x20-\\x7e\\xa0-\\ud7ff\\ue000-\\ufffd\\U00010000-\\U0010ffff]|\\u2028|\\u2029"
)
_SINGLE = re.compile(r"'(?:[^']|'')*'")
# A flow sequence of plain words: no quotes, colons, comments or nested collections.
_WORD = r"-?[A-Za-z0-9_.~/+][A-Za-z0-9_.~/+-]*"
_FLOW_WORDS = re.compile(rf"\[ *(?:{_WORD}(?: *, *{_WORD})*)? *\]")
_MAX_KEY = 1000  # YAML limits implicit keys to 1024 characters


class _NotSimple(Exception):
    pass


def parse_simple_block(block: str, json_values: dict[str, Any] | None = None) -> dict[str, str] | None:
    """The frontmatter strings for a simple block, or ``None`` when YAML must decide.

    A key whose string is its one-line JSON text verbatim gets the parsed value in
    ``json_values`` too (what ``json.loads`` of that string gives), so that the manifest
    reader need not parse the same ``metadata`` text a second time.
    """
    result: dict[str, str] = {}
    parsed_json: dict[str, Any] = {}
    lines = block.split("\n")
    seen: set[str] = set()
    try:
        index, count = 0, len(lines)
        while index < count:
            line = lines[index]
            index += 1
            if not line or line[0] == "#":
                continue
            match = _LINE.fullmatch(line)
            if match is not None:
                key = _new_key(match.group(1), seen)
                value = _top_value(match.group(2).rstrip(" "), key, parsed_json)
            else:
                opener = _OPENER.fullmatch(line)
                if opener is None:
                    return None
                key = _new_key(opener.group(1), seen)
                index, nested = _mapping(lines, index, 0)
                # YAML's null is dropped, and the line reader has nothing for an empty value.
                value = None if nested is None else json_stringify(nested)
            if value is not None:
                result[key] = value
    except _NotSimple:
        return None
    if json_values is not None and result:
        json_values.update(parsed_json)
    return result or None


def _new_key(key: str, seen: set[str]) -> str:
    if key in _KEYWORDS or key in seen or len(key) > _MAX_KEY:
        raise _NotSimple  # a keyword key is not a string, and YAML rejects duplicate keys
    seen.add(key)
    return key


def _mapping(lines: list[str], index: int, parent_indent: int) -> tuple[int, dict[str, Any] | None]:
    """The block mapping indented past ``parent_indent`` from line ``index``; ``None`` if none."""
    mapping: dict[str, Any] = {}
    seen: set[str] = set()
    indent = -1
    while index < len(lines):
        line = lines[index]
        body = line.lstrip(" ")
        depth = len(line) - len(body)
        if depth <= parent_indent and body:
            break
        if not body or (indent >= 0 and depth != indent):
            raise _NotSimple  # blank lines, continuations and uneven indentation: YAML decides
        indent = depth
        index += 1
        match = _LINE.fullmatch(body)
        if match is not None:
            key = _new_key(match.group(1), seen)
            mapping[key] = _nested_value(match.group(2).rstrip(" "))
            continue
        opener = _OPENER.fullmatch(body)
        if opener is None:
            raise _NotSimple
        key = _new_key(opener.group(1), seen)
        index, mapping[key] = _mapping(lines, index, depth)
    return index, (mapping if indent >= 0 else None)


def _top_value(raw: str, key: str, parsed_json: dict[str, Any]) -> str | None:
    """The frontmatter string for a top-level value (``None`` drops the key, as YAML null does)."""
    if raw[0] in "{[" and not _FLOW_WORDS.fullmatch(raw):
        return _json_value(raw, key, parsed_json)
    value = _nested_value(raw)
    if value is None:
        return _strip_quotes(raw) or None  # YAML drops null; the line reader keeps the text
    if isinstance(value, str):
        return js_trim(value)
    return json_stringify(value) if isinstance(value, list) else js_string(value)


def _nested_value(raw: str) -> Any:
    """The JavaScript value of a value inside a block mapping (strings are not trimmed)."""
    if "\t" in raw:
        raise _NotSimple
    first = raw[0]
    if first == "[" and _FLOW_WORDS.fullmatch(raw):
        return _flow_words(raw)
    if first in "{[":
        return _json(raw)
    if first == '"':
        return _double_quoted(raw)
    if first == "'":
        return _single_quoted(raw)
    return _plain(raw)


def _plain(raw: str) -> Any:
    if raw[0] in _PLAIN_START_BAD or _unsafe_plain(raw):
        raise _NotSimple
    return resolve_plain(raw)


def _unsafe_plain(raw: str) -> bool:
    """``_UNSAFE.search(raw)``, by substring tests for printable ASCII (most text)."""
    if not (raw.isascii() and raw.isprintable()):
        return _UNSAFE.search(raw) is not None
    return (
        "[" in raw or "]" in raw or "{" in raw or "}" in raw or ": " in raw or " #" in raw or raw[-1] == ":"
    )


def _double_quoted(raw: str) -> str:
    try:
        text = json.loads(raw)
    except ValueError:
        raise _NotSimple from None
    if not isinstance(text, str) or _UNSAFE_QUOTED.search(raw):
        raise _NotSimple
    return text


def _single_quoted(raw: str) -> str:
    if not _SINGLE.fullmatch(raw) or _UNSAFE_QUOTED.search(raw):
        raise _NotSimple
    return raw[1:-1].replace("''", "'")


def _flow_words(raw: str) -> list[Any]:
    inner = raw[1:-1].strip(" ")
    return [resolve_plain(word.strip(" ")) for word in inner.split(",")] if inner else []


def _json(raw: str) -> Any:
    """A one-line JSON object or array, read as the YAML flow collection it also is."""
    if _UNSAFE_QUOTED.search(raw):
        raise _NotSimple
    try:
        parsed = (_DECODER if len(raw) <= _MAX_KEY else _LONG_DECODER).decode(raw)
    except ValueError:
        raise _NotSimple from None
    if not isinstance(parsed, dict | list):
        raise _NotSimple
    return parsed


def _json_value(raw: str, key: str, parsed_json: dict[str, Any]) -> str:
    """A top-level one-line JSON value's frontmatter string."""
    parsed = _json(raw)
    # On a line whose value contains ":", OpenClaw keeps the raw text; else YAML's JSON form.
    if ":" not in raw:
        return json_stringify(parsed)
    # Keys are unique (checked above), so this is exactly what json.loads(raw) gives.
    parsed_json[key] = parsed
    return raw


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise _NotSimple  # YAML rejects duplicate keys; JSON keeps the last
    return mapping


def _unique_short_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if any(len(key) > _MAX_KEY for key, _ in pairs):
        raise _NotSimple  # YAML refuses implicit keys this long
    return _unique_pairs(pairs)


def _no_constants(name: str) -> Any:
    raise _NotSimple


# Decoders made once: json.loads with hooks would build a new one per call. Only text
# longer than the key limit can hold a key that long.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_no_constants)
_LONG_DECODER = json.JSONDecoder(object_pairs_hook=_unique_short_pairs, parse_constant=_no_constants)


def _strip_quotes(value: str) -> str:
    if value[:1] in ('"', "'") and value[-1:] == value[:1]:
        return value[1:-1]
    return value
