"""Tool-name assignment: ``<safeServer>__<safeTool>`` names as the model sees them.

Follows OpenClaw 2026.9.6 (``buildSafeToolName`` in
``src/agents/agent-bundle-mcp-names.ts``). The whole name stays within 64
UTF-16 units; the tool part is cut to fit after the server prefix and the
``__`` separator. Collisions are resolved case-insensitively against reserved
names (built-in tools, other servers' tools) and the names assigned so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from clawplane.jscompat.strings import js_lower_key
from clawplane.jscompat.utf16 import utf16_cut, utf16_len
from clawplane.naming.servers import TOOL_NAME_MAX_TOTAL, TOOL_NAME_SEPARATOR, sanitize_fragment

__all__ = [
    "TOOL_NAME_FALLBACK",
    "ToolName",
    "assign_tool_names",
    "max_tool_chars",
    "name_tools",
]

TOOL_NAME_FALLBACK = "tool"
"""Fallback fragment for tool names that are empty or do not start with a letter."""


class ToolName(NamedTuple):
    """One MCP tool's raw name (as the server lists it) and its model-facing safe name."""

    raw: str
    safe: str


def max_tool_chars(safe_server: str) -> int:
    """Return the UTF-16 budget for the tool part after ``<safe_server>__`` (at least 1)."""
    return max(1, TOOL_NAME_MAX_TOTAL - utf16_len(safe_server) - len(TOOL_NAME_SEPARATOR))


def _reserved_keys(reserved: Iterable[str]) -> set[str]:
    """Normalize reserved names (trim, lower-case, drop blanks) for collision checks."""
    return {key for key in (js_lower_key(name) for name in reserved) if key}


def name_tools(safe_server: str, raw_tools: Sequence[str], *, reserved: Iterable[str] = ()) -> list[ToolName]:
    """Pair each raw tool name with its safe ``<safe_server>__<tool>`` name, in input order.

    The tool part is sanitized with fallback ``tool`` (no length limit) and
    then cut to :func:`max_tool_chars`. A full name equal (case-insensitively,
    after trimming) to a reserved name or an earlier assigned one gets
    ``-2``, ``-3``, ... on the tool part, which is cut so the suffix still fits.
    Assignment order decides who gets the suffix, so callers must pass tools
    in a stable order.
    """
    budget = max_tool_chars(safe_server)
    taken = _reserved_keys(reserved)
    named: list[ToolName] = []
    for raw in raw_tools:
        cleaned = sanitize_fragment(raw, fallback=TOOL_NAME_FALLBACK, max_chars=None)
        tool_part = utf16_cut(cleaned, budget) or TOOL_NAME_FALLBACK
        candidate = f"{safe_server}{TOOL_NAME_SEPARATOR}{tool_part}"
        n = 2
        while js_lower_key(candidate) in taken:
            suffix = f"-{n}"
            suffixed = utf16_cut(tool_part, max(1, budget - len(suffix))) + suffix
            candidate = f"{safe_server}{TOOL_NAME_SEPARATOR}{suffixed}"
            n += 1
        taken.add(js_lower_key(candidate))
        named.append(ToolName(raw=raw, safe=candidate))
    return named


def assign_tool_names(
    safe_server: str, raw_tools: Sequence[str], *, reserved: Iterable[str] = ()
) -> list[str]:
    """Return the safe ``<safe_server>__<tool>`` name of each raw tool, in input order."""
    return [tool.safe for tool in name_tools(safe_server, raw_tools, reserved=reserved)]
