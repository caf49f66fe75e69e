"""Per-server tool filters: ``toolFilter.include`` / ``toolFilter.exclude`` globs.

Follows OpenClaw 2026.9.6 (``src/agents/mcp-tool-filter.ts``). Patterns are
matched against the **raw** MCP tool name, before any sanitization. The only
wildcard is ``*`` (any run of characters, including none); everything else is
literal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from clawplane.jscompat.strings import js_trim
from clawplane.jscompat.utf16 import utf16_sort_key

__all__ = ["glob_matches", "is_tool_allowed", "normalize_filter_list"]


def glob_matches(pattern: str, name: str) -> bool:
    """Return True if ``name`` matches the trimmed ``pattern`` (``*`` = any substring).

    A pattern without ``*`` must equal the name exactly (case-sensitive). With
    ``*``, the text before the first star is an anchored prefix, the text after
    the last star an anchored suffix, and the parts in between must appear in
    order without overlapping the prefix or suffix. A blank pattern matches
    nothing.
    """
    trimmed = js_trim(pattern)
    if not trimmed:
        return False
    if "*" not in trimmed:
        return trimmed == name
    parts = trimmed.split("*")
    first, middle, last = parts[0], parts[1:-1], parts[-1]
    if not name.startswith(first):
        return False
    cursor = len(first)
    end = len(name) - len(last)
    if not name.endswith(last) or end < cursor:
        return False
    for part in middle:
        if not part:
            continue
        index = name.find(part, cursor, end)
        if index == -1:
            return False
        cursor = index + len(part)
    return True


def is_tool_allowed(raw_name: str, *, include: Sequence[str] | None, exclude: Sequence[str] | None) -> bool:
    """Return True if the raw tool name passes the include-then-exclude filter.

    Allowed means: (``include`` is absent or empty, or some include pattern
    matches) and no exclude pattern matches.
    """
    included = not include or any(glob_matches(pattern, raw_name) for pattern in include)
    excluded = any(glob_matches(pattern, raw_name) for pattern in exclude or ())
    return included and not excluded


def normalize_filter_list(items: Iterable[str]) -> list[str]:
    """Trim, drop blanks, de-duplicate and sort, as ``openclaw mcp tools --include`` stores a list.

    Sorting uses UTF-16 code-unit order, like JavaScript's default ``sort()``.
    Splitting a comma-separated CLI argument is the caller's job.
    """
    unique = {trimmed for trimmed in (js_trim(item) for item in items) if trimmed}
    return sorted(unique, key=utf16_sort_key)
