"""Surgical YAML edits for ``clawplane doctor --fix``.

Files are parsed with ruamel.yaml's round-trip loader (``typ='rt'``, quotes preserved),
which records where every key and value starts. Fixes are then applied as splices of
the original text at those positions, so everything that is not an offending node
(comments, key order, quoting, indentation, odd spacing, document separators) stays
byte-for-byte. Re-dumping the whole document would normalize unrelated formatting.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML

BOM = "\ufeff"


def rt_yaml() -> YAML:
    """A round-trip YAML instance that keeps quotes and never re-wraps lines."""
    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.width = 1 << 30
    return yaml


def load_documents(text: str) -> list[Any]:
    """Every document of a YAML stream, as round-trip nodes with positions."""
    return list(rt_yaml().load_all(io.StringIO(text)))


@dataclass(frozen=True)
class Splice:
    """Replace ``text[start:end]`` with ``new``."""

    start: int
    end: int
    new: str


class Text:
    """Offsets and scalar extents inside one file's text."""

    def __init__(self, text: str) -> None:
        self.text = text
        # ruamel.yaml does not count a leading BOM in columns: line 0 starts after it.
        self.starts = [len(BOM) if text.startswith(BOM) else 0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(i + 1)

    def offset(self, line: int, col: int) -> int:
        """Offset of a 0-based (line, column) position."""
        return self.starts[line] + col

    def line_end(self, offset: int) -> int:
        """Offset of the newline ending the line that holds ``offset`` (or the end of text)."""
        end = self.text.find("\n", offset)
        return len(self.text) if end < 0 else end

    def scalar_end(self, start: int, *, flow: bool = False) -> int | None:
        """End of the one-line scalar token at ``start``; None if it is not a one-line scalar."""
        text = self.text
        if start >= len(text):
            return None
        first = text[start]
        if first in "\"'":
            i = start + 1
            while i < len(text) and text[i] != "\n":
                if first == '"' and text[i] == "\\":
                    i += 2
                    continue
                if text[i] == first:
                    if first == "'" and i + 1 < len(text) and text[i + 1] == "'":
                        i += 2
                        continue
                    return i + 1
                i += 1
            return None
        if first in "[{|>&*!\n":
            return None
        end = self.line_end(start)
        line = text[start:end]
        for i, ch in enumerate(line):
            if ch == "#" and i > 0 and line[i - 1] in " \t":
                end = start + i
                break
            if flow and ch in ",}]":
                end = start + i
                break
        return start + len(text[start:end].rstrip())

    def token_is(self, start: int, word: str) -> int | None:
        """End of ``word`` at ``start`` (plain or quoted); None when the text differs."""
        if self.text.startswith(word, start):
            return start + len(word)
        for quote in "\"'":
            quoted = f"{quote}{word}{quote}"
            if self.text.startswith(quoted, start):
                return start + len(quoted)
        return None


def scalar_like(original: str, value: Any) -> str:
    """``value`` as a YAML scalar, quoted the way ``original`` was (if it was quoted)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    if original.startswith('"'):
        return json.dumps(text, ensure_ascii=False)
    if original.startswith("'"):
        return "'" + text.replace("'", "''") + "'"
    return text if _plain_ok(text) else json.dumps(text, ensure_ascii=False)


def _plain_ok(text: str) -> bool:
    if not text or text != text.strip() or text[0] in "-?:,[]{}#&*!|>'\"%@`":
        return False
    if any(s in text for s in (": ", " #", "\n")):
        return False
    lowered = text.lower()
    if lowered in ("true", "false", "yes", "no", "on", "off", "null", "~"):
        return False
    try:
        float(text)
    except ValueError:
        return True
    return False


def apply_splices(text: str, splices: list[Splice]) -> str:
    """Apply non-overlapping splices (any order)."""
    out = text
    last = len(text) + 1
    for s in sorted(splices, key=lambda s: s.start, reverse=True):
        if s.end > last:
            raise ValueError("overlapping edits")
        out = out[: s.start] + s.new + out[s.end :]
        last = s.start
    return out


__all__ = ["BOM", "Splice", "Text", "apply_splices", "load_documents", "rt_yaml", "scalar_like"]
