"""A fast path for the frontmatter most skills have: one ``key: value`` per line.

Composing YAML costs far more than the text warrants for blocks like::

    name: weather
    description: Get the forecast.
    metadata: {"openclaw": {"requires": {"bins": ["curl"]}}}

When every line is a top-level key with a plain, quoted or one-line JSON value
that YAML cannot read any other way, the result YAML (and OpenClaw) would give
is computed directly. Anything else (indentation, comments after values, tabs,
anchors, tags, block scalars, flow values that are not JSON, duplicate keys…)
returns ``None`` and takes the full path. The differential tests run both paths
against OpenClaw.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clawplane.naming import js_trim
from clawplane.skills.jsvalues import js_string, json_stringify
from clawplane.skills.yamlvalues import resolve_plain

__all__ = ["parse_simple_block"]

_LINE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*): +(\S.*)")
_KEYWORDS = frozenset({"null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"})
_PLAIN_START_BAD = frozenset("-?:,[]{}#&*!|>'\"%@`")
# Printable per YAML 1.2, minus what could change the meaning of a plain scalar here.
_UNSAFE = re.compile("[^\\x20-\\x7e\\xa0-\\ud7ff\\ue000-\\ufffd\\U00010000-\\U0010ffff]|[\\[\\]{}]"
                     "|: | #|:$|\\u2028|\\u2029")
_SINGLE = re.compile(r"'(?:[^']|'')*'")
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
    try:
        for line in block.split("\n"):
            if not line or line.startswith("#"):
                continue
            match = _LINE.fullmatch(line)
            if match is None or match.group(1) in _KEYWORDS or match.group(1) in result:
                return None
            key, raw = match.group(1), match.group(2).rstrip(" ")
            value = _value(raw, key, parsed_json)
            if value is not None:
                result[key] = value
    except _NotSimple:
        return None
    if json_values is not None and result:
        json_values.update(parsed_json)
    return result or None


def _value(raw: str, key: str, parsed_json: dict[str, Any]) -> str | None:
    """The frontmatter string for one value (``None`` drops the key, as YAML null does)."""
    if "\t" in raw:
        raise _NotSimple
    first = raw[0]
    if first in "{[":
        return _json_value(raw, key, parsed_json)
    if first == '"':
        try:
            text = json.loads(raw)
        except ValueError:
            raise _NotSimple from None
        if not isinstance(text, str) or _UNSAFE_QUOTED.search(raw):
            raise _NotSimple
        return js_trim(text)
    if first == "'":
        if not _SINGLE.fullmatch(raw) or _UNSAFE_QUOTED.search(raw):
            raise _NotSimple
        return js_trim(raw[1:-1].replace("''", "'"))
    if first in _PLAIN_START_BAD or _UNSAFE.search(raw):
        raise _NotSimple
    resolved = resolve_plain(raw)
    if resolved is None:
        return _strip_quotes(raw) or None  # YAML drops null; the line reader keeps the text
    return js_trim(resolved) if isinstance(resolved, str) else js_string(resolved)


_UNSAFE_QUOTED = re.compile("[^\\x20-\\x7e\\xa0-\\ud7ff\\ue000-\\ufffd\\U00010000-\\U0010ffff]"
                            "|\\u2028|\\u2029")


def _json_value(raw: str, key: str, parsed_json: dict[str, Any]) -> str:
    """A one-line JSON object or array, read as the YAML flow collection it also is."""
    if _UNSAFE_QUOTED.search(raw):
        raise _NotSimple
    try:
        parsed = json.loads(raw, object_pairs_hook=_unique_pairs, parse_constant=_no_constants)
    except ValueError:
        raise _NotSimple from None
    if not isinstance(parsed, dict | list):
        raise _NotSimple
    # On a line whose value contains ":", OpenClaw keeps the raw text; else YAML's JSON form.
    if ":" not in raw:
        return json_stringify(parsed)
    # Keys are unique (checked above), so this is exactly what json.loads(raw) gives.
    parsed_json[key] = parsed
    return raw


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys) or any(len(key) > _MAX_KEY for key in keys):
        raise _NotSimple  # YAML rejects duplicate keys (JSON keeps the last) and huge keys
    return dict(pairs)


def _no_constants(name: str) -> Any:
    raise _NotSimple


def _strip_quotes(value: str) -> str:
    if value[:1] in ('"', "'") and value[-1:] == value[:1]:
        return value[1:-1]
    return value
