"""Tool approval modes as Codex applies them, and which declared rule governs a tool.

Modes (``codex-rs/core/src/mcp_tool_call.rs``, ``requires_mcp_tool_approval_for_mode``):
``approve`` never asks; ``prompt`` always asks; ``writes`` asks unless the tool says it is
read-only; ``auto`` asks when the tool says it is destructive, skips when it says it is
read-only or both not destructive and closed-world, and asks otherwise — a missing hint
counts as destructive and open-world, so an unannotated tool asks.

A server's ``toolApproval.tools`` maps raw tool names or ``*`` globs to modes. Codex has
only exact per-tool keys, so the most specific rule wins: an exact name over any glob, then
the glob with more literal characters, then the lexically smaller pattern (a stable order
however the mapping was written).
"""

from __future__ import annotations

from collections.abc import Mapping

from clawplane.naming.toolfilter import glob_matches

__all__ = ["APPROVAL_MODES", "needs_approval", "rule_for"]

APPROVAL_MODES = ("auto", "prompt", "writes", "approve")


def _specificity(pattern: str) -> tuple[int, int, str]:
    exact = "*" not in pattern
    return (0 if exact else 1, -len(pattern.replace("*", "")), pattern)


def rule_for(tool: str, rules: Mapping[str, str]) -> tuple[str, str] | None:
    """The ``(pattern, mode)`` that governs raw tool name ``tool``, or None when none matches."""
    matching = [p for p in rules if glob_matches(p.strip(), tool)]
    if not matching:
        return None
    best = min(matching, key=_specificity)
    return best, rules[best]


def _hint(annotations: Mapping[str, object] | None, key: str) -> bool | None:
    value = (annotations or {}).get(key)
    return value if isinstance(value, bool) else None


def needs_approval(mode: str, annotations: Mapping[str, object] | None) -> bool:
    """Whether a call in ``mode`` to a tool with these MCP annotations waits for an approval."""
    if mode == "approve":
        return False
    if mode == "prompt":
        return True
    read_only = _hint(annotations, "readOnlyHint")
    if mode == "writes":
        return read_only is not True
    destructive = _hint(annotations, "destructiveHint")
    if destructive is True:
        return True
    if read_only is True:
        return False
    open_world = _hint(annotations, "openWorldHint")
    return not (destructive is False and open_world is False)
