"""Indented JSON, byte for byte as ``json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)``.

Python's encoder has no C path once ``indent`` is set, so a large ``openclaw.json`` (a fleet
of servers and agents) costs most of a re-render in pure-Python encoding. ``IndentedJson``
keeps the text of each fleet member (``mcp.servers.<name>``, ``agents.entries.<id>``; the
empty path ``()`` makes the whole document the member) keyed by its compact JSON, which the
C encoder makes quickly: a re-render re-encodes only the members that changed. The indented
text of a value is a function of its compact JSON, so a hit is exact; texts are stored at
indentation level 0 and shifted to where they are placed.
A member that is the very object placed there last pass reuses its text without even the
compact dump: callers hand in such objects only when they never change them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from clawplane._utils.compactjson import compact

__all__ = ["IndentedJson"]

INDENT = "  "
_INF = float("inf")
_encode_string: Callable[[str], str] = (
    getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring
)


def _plain(value: Any) -> str:
    return _indented(value, 0)


def _indented(value: Any, level: int) -> str:
    """``json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)`` at ``level``, made faster.

    The same checks in the same order as ``json.encoder._make_iterencode``, with strings
    encoded by the C helper; anything unusual (non-string keys, other types) goes to
    ``json.dumps`` itself.
    """
    if isinstance(value, str):
        return _encode_string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float) and value == value and value not in (_INF, -_INF):
        return float.__repr__(value)
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        inner = "\n" + INDENT * (level + 1)
        return (
            "["
            + inner
            + ("," + inner).join(_indented(v, level + 1) for v in value)
            + "\n"
            + INDENT * level
            + "]"
        )
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        if not value:
            return "{}"
        inner = "\n" + INDENT * (level + 1)
        return (
            "{"
            + inner
            + ("," + inner).join(
                _encode_string(k) + ": " + _indented(v, level + 1) for k, v in sorted(value.items())
            )
            + "\n"
            + INDENT * level
            + "}"
        )
    return _shifted(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False), level)


Placed = dict[str, tuple[Any, int, str, str]]
"""Per member key of one fleet: the member object placed there, its level, its text and its line."""
_NONE_PLACED: Placed = {}


class IndentedJson:
    """Encodes documents, reusing the text of unchanged members under the given fleet paths."""

    def __init__(self, fleets: Sequence[tuple[str, ...]]) -> None:
        self.fleets = tuple(fleets)
        self._prefixes = {fleet[:n] for fleet in self.fleets for n in range(len(fleet) + 1)}
        self._fleet_set = frozenset(self.fleets)
        # A fleet no other fleet lies under holds only members: no per-child path tests there.
        self._leaves = frozenset(
            f for f in self.fleets if not any(len(g) > len(f) and g[: len(f)] == f for g in self.fleets)
        )
        self._memo: dict[str, str] = {}
        self._fresh: dict[str, str] = {}
        # The same member object as last pass (renderers keep unchanged entries): no key needed.
        self._placed: dict[tuple[str, ...], Placed] = {}
        self._placed_fresh: dict[tuple[str, ...], Placed] = {}

    def begin_pass(self) -> None:
        """Start a render pass: texts the last pass did not use are dropped, so none pile up."""
        self._memo, self._fresh = self._fresh, {}
        self._placed, self._placed_fresh = self._placed_fresh, {}

    def dumps(self, doc: Any) -> str:
        """The document's text (no trailing newline), as ``json.dumps`` would write it."""
        return self._encode(doc, (), 0)

    def _encode(self, value: Any, path: tuple[str, ...], level: int) -> str:
        if (
            path in self._prefixes
            and value
            and isinstance(value, dict)
            and all(issubclass(t, str) for t in set(map(type, value)))
        ):
            inner = "\n" + INDENT * (level + 1)
            if path in self._leaves:
                items = self._members(value, path, level + 1)
            else:
                items = [
                    _encode_string(key) + ": " + self._encode(item, (*path, key), level + 1)
                    for key, item in sorted(value.items())
                ]
            return "{" + inner + ("," + inner).join(items) + "\n" + INDENT * level + "}"
        if path[:-1] in self._fleet_set:
            fleet = path[:-1]
            placed, fresh = self._placed.get(fleet, _NONE_PLACED), self._placed_fresh.setdefault(fleet, {})
            # The empty fleet's one member is the document itself, at the empty key.
            return self._member(value, path[-1] if path else "", placed, fresh, level)[2]
        return _shifted(_plain(value), level)

    def _members(self, value: dict[str, Any], fleet: tuple[str, ...], level: int) -> list[str]:
        """The ``"key": text`` lines of a leaf fleet's members, in key order."""
        placed, fresh = self._placed.get(fleet, _NONE_PLACED), self._placed_fresh.setdefault(fleet, {})
        member = self._member
        # Keys are distinct strings: sorting them gives the order of sorted(items()).
        return [member(value[key], key, placed, fresh, level)[3] for key in sorted(value)]

    def _member(
        self, value: Any, key: str, placed: Placed, fresh: Placed, level: int
    ) -> tuple[Any, int, str, str]:
        hit = placed.get(key)
        if hit is not None and hit[0] is value and hit[1] == level and isinstance(value, dict | list):
            fresh[key] = hit
            return hit
        compact_text = compact(value, sort_keys=True)
        text = self._memo.get(compact_text) or self._fresh.get(compact_text) or _plain(value)
        self._fresh[compact_text] = text
        shifted = _shifted(text, level)
        hit = fresh[key] = (value, level, shifted, _encode_string(key) + ": " + shifted)
        return hit


def _shifted(text: str, level: int) -> str:
    return text.replace("\n", "\n" + INDENT * level) if level else text
