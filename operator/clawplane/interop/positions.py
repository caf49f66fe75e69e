"""Where each key of an imported JSON5 or TOML file starts, so a loss can name its file:line.

The values themselves come from ``json5`` and ``tomllib``, which keep no positions; these
scanners only walk the text far enough to map every key path (``("mcp", "servers", "a")``,
list items by index) to the 1-based line and column where it is written. A path the scan
cannot place falls back to its nearest placed parent, so a malformed corner of a file costs
precision, never the import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

ConfigPath = tuple[str | int, ...]
Positions = dict[ConfigPath, tuple[int, int]]

MAX_SCAN_DEPTH = 64
"""Deeper keys are placed at their nearest parent (the importer refuses deeper files anyway)."""
_DELIMITERS = set(",:[]{}") | {" ", "\t", "\r", "\n", "/"}
# A string's body up to (not including) its closing quote; an escape keeps the character after it.
_STRING_BODY = {q: re.compile(rf"[^{q}\\]*(?:\\[\s\S]?[^{q}\\]*)*") for q in "\"'"}
_ESCAPED = re.compile(r"\\([\s\S]?)")


def locate(positions: Mapping[ConfigPath, tuple[int, int]], path: ConfigPath) -> tuple[int, int]:
    """``(line, column)`` of ``path`` or of its nearest placed parent; ``(0, 0)`` when none is."""
    for end in range(len(path), -1, -1):
        found = positions.get(path[:end])
        if found is not None:
            return found
    return (0, 0)


class _Json5Scanner:
    """Walks JSON5 text (comments, trailing commas, bare keys, single quotes) recording key positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.positions: Positions = {}
        # Offsets of line starts, for offset → (line, column).
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(self, offset: int) -> tuple[int, int]:
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.line_starts[lo] + 1

    def skip_space(self) -> None:
        text, n = self.text, len(self.text)
        while self.i < n:
            c = text[self.i]
            if c in " \t\r\n\ufeff\u00a0\u2028\u2029":
                self.i += 1
            elif text.startswith("//", self.i):
                end = text.find("\n", self.i)
                self.i = n if end == -1 else end + 1
            elif text.startswith("/*", self.i):
                end = text.find("*/", self.i + 2)
                self.i = n if end == -1 else end + 2
            else:
                return

    def value(self, path: ConfigPath) -> None:
        self.skip_space()
        if self.i >= len(self.text):
            return
        c = self.text[self.i]
        if c in "{[" and len(path) >= MAX_SCAN_DEPTH:
            self.skip_nested()  # no recursion without bound: deeper keys take their parent's place
        elif c == "{":
            self.obj(path)
        elif c == "[":
            self.array(path)
        elif c in "\"'":
            self.string()
        else:
            self.bare()

    def string(self) -> str:
        # One regular-expression step to the closing quote (a long value is not walked in Python).
        found = _STRING_BODY[self.text[self.i]].match(self.text, self.i + 1)
        assert found is not None  # the pattern matches the empty string at least
        raw = found.group()
        self.i = found.end()
        if self.i < len(self.text):
            self.i += 1  # the closing quote
        return _ESCAPED.sub(r"\1", raw) if "\\" in raw else raw

    def skip_nested(self) -> None:
        """Step over the object or array that starts here, however deep, without recording keys."""
        depth = 0
        while self.i < len(self.text):
            self.skip_space()
            if self.i >= len(self.text):
                return
            c = self.text[self.i]
            if c in "\"'":
                self.string()
                continue
            self.i += 1
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth <= 0:
                    return

    def bare(self) -> str:
        start = self.i
        while self.i < len(self.text) and self.text[self.i] not in _DELIMITERS:
            self.i += 1
        if self.i == start:
            self.i += 1  # a stray delimiter: step over it so the scan always advances
        return self.text[start : self.i]

    def obj(self, path: ConfigPath) -> None:
        self.i += 1
        while True:
            self.skip_space()
            if self.i >= len(self.text) or self.text[self.i] == "}":
                self.i += 1
                return
            if self.text[self.i] == ",":
                self.i += 1
                continue
            start = self.i
            key = self.string() if self.text[self.i] in "\"'" else self.bare()
            self.positions.setdefault((*path, key), self.where(start))
            self.skip_space()
            if self.i < len(self.text) and self.text[self.i] == ":":
                self.i += 1
            self.value((*path, key))

    def array(self, path: ConfigPath) -> None:
        self.i += 1
        index = 0
        while True:
            self.skip_space()
            if self.i >= len(self.text) or self.text[self.i] == "]":
                self.i += 1
                return
            if self.text[self.i] == ",":
                self.i += 1
                continue
            self.positions.setdefault((*path, index), self.where(self.i))
            self.value((*path, index))
            index += 1


def json5_positions(text: str) -> Positions:
    """Key path → ``(line, column)`` for a JSON or JSON5 document."""
    scanner = _Json5Scanner(text)
    scanner.skip_space()
    scanner.positions[()] = scanner.where(scanner.i)
    scanner.value(())
    return scanner.positions


_TOML_KEY_PART = re.compile(r"""\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*""")


def _toml_key(text: str) -> tuple[list[str], int] | None:
    """The dotted key at the start of ``text`` and where it ends, or None."""
    parts: list[str] = []
    pos = 0
    while True:
        m = _TOML_KEY_PART.match(text, pos)
        if m is None or m.end() == pos:
            return None
        parts.append(next(g for g in m.groups() if g is not None))
        pos = m.end()
        if text[pos : pos + 1] != ".":
            return parts, pos
        pos += 1


def toml_positions(text: str) -> Positions:
    """Key path → ``(line, column)`` for a TOML document (tables, arrays of tables, dotted keys)."""
    positions: Positions = {(): (1, 1)}
    table: ConfigPath = ()
    counts: dict[ConfigPath, int] = {}
    multiline: str | None = None
    depth = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if multiline is not None:
            if line.count(multiline) % 2 == 1:
                multiline = None
            continue
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if depth == 0 and stripped.startswith("["):
            array = stripped.startswith("[[")
            parsed = _toml_key(stripped[2 if array else 1 :])
            if parsed is not None:
                base = tuple(parsed[0])
                if array:
                    index = counts.get(base, 0)
                    counts[base] = index + 1
                    table = (*base, index)
                else:
                    table = base
                positions.setdefault(base, (number, indent + 1))
                positions.setdefault(table, (number, indent + 1))
            continue
        if depth == 0 and stripped and not stripped.startswith("#"):
            parsed = _toml_key(line)
            if parsed is not None and line[parsed[1] : parsed[1] + 1] == "=":
                positions.setdefault((*table, *parsed[0]), (number, indent + 1))
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 == 1:
                multiline = quote
        value = line.split("=", 1)[1] if depth == 0 and "=" in line else line
        depth = max(0, depth + _bracket_balance(value))
    return positions


def _bracket_balance(line: str) -> int:
    """Open minus closed brackets outside strings and comments (multi-line arrays and inline tables)."""
    balance = 0
    quote: str | None = None
    escaped = False
    for c in line:
        if quote is not None:
            if escaped:
                escaped = False
            elif c == "\\" and quote == '"':
                escaped = True
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            break
        elif c in "[{":
            balance += 1
        elif c in "]}":
            balance -= 1
    return balance
