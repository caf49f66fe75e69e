"""Server-name sanitization: turning configured MCP server keys into safe tool prefixes.

Follows OpenClaw 2026.9.6 (``src/agents/agent-bundle-mcp-names.ts``). A server
key such as ``"my server"`` becomes the prefix ``my-server`` of every tool the
server exposes (``my-server__read_file``). Names are assigned in declaration
order over the full configured set, so the same config always yields the same
names. All lengths are UTF-16 code units (see :mod:`clawplane.jscompat.utf16`).
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence

from clawplane.jscompat.strings import js_lower_key, js_trim
from clawplane.jscompat.utf16 import utf16_cut, utf16_len

__all__ = [
    "ENDPOINT_SERVER_NAMES",
    "OPENCLAW_REJECTED_SERVER_NAME",
    "RESERVED_SERVER_NAMES",
    "SERVER_NAME_FALLBACK",
    "SERVER_NAME_MAX",
    "TOOL_NAME_MAX_TOTAL",
    "TOOL_NAME_SEPARATOR",
    "assign_server_names",
    "is_reserved_server_name",
    "sanitize_fragment",
]

SERVER_NAME_MAX = 30
"""Longest safe server name (OpenClaw ``TOOL_NAME_MAX_PREFIX``), in UTF-16 units."""

TOOL_NAME_MAX_TOTAL = 64
"""Longest model-facing tool name ``<server>__<tool>``, in UTF-16 units."""

TOOL_NAME_SEPARATOR = "__"
"""Separator between the safe server name and the safe tool name."""

SERVER_NAME_FALLBACK = "mcp"
"""Fallback fragment for server names that are empty or do not start with a letter."""

OPENCLAW_REJECTED_SERVER_NAME = "__proto__"
"""The only server key OpenClaw's config schema rejects (``... "__proto__" is reserved ...``)."""

RESERVED_SERVER_NAMES = frozenset({"__proto__", "constructor", "prototype"})
"""Server keys clawplane refuses: ``__proto__`` as OpenClaw does, plus two JS prototype keys."""
ENDPOINT_SERVER_NAMES = frozenset({"agents"})
"""Server names the hosted endpoint keeps for its own paths: ``/mcp/agents/<agent>``, each agent's
aggregated endpoint (a server of that name would be unreachable at ``/mcp/agents``)."""

_SAFE_CHARS = frozenset(string.ascii_letters + string.digits + "_-")
_ASCII_LETTERS = frozenset(string.ascii_letters)


def _replace_unsafe(text: str) -> str:
    """Replace every UTF-16 code unit outside ``[A-Za-z0-9_-]`` with ``-``."""
    return "".join(ch if ch in _SAFE_CHARS else "--" if ord(ch) > 0xFFFF else "-" for ch in text)


def sanitize_fragment(raw: str, *, fallback: str, max_chars: int | None) -> str:
    """Sanitize one name fragment the way OpenClaw's ``sanitizeToolFragment`` does.

    Steps: trim (JavaScript whitespace); replace each UTF-16 code unit outside
    ``[A-Za-z0-9_-]`` with ``-`` (``é`` gives one dash, an emoji two, no
    collapsing); empty gives ``fallback``; a result not starting with an ASCII
    letter gets the prefix ``fallback + "-"``; finally cut to ``max_chars``
    UTF-16 units. ``max_chars`` of ``None`` or ``0`` means no limit (JavaScript
    ``!maxChars``). Safe characters are ASCII, so the cut can only split a
    surrogate pair if ``fallback`` itself contains one.
    """
    cleaned = _replace_unsafe(js_trim(raw))
    normalized = cleaned or fallback
    provider_safe = normalized if normalized[:1] in _ASCII_LETTERS else f"{fallback}-{normalized}"
    if not max_chars or utf16_len(provider_safe) <= max_chars:
        return provider_safe
    return utf16_cut(provider_safe, max_chars)


def _with_suffix(base: str, n: int, limit: int) -> str:
    """Return ``base`` cut to leave room for ``-<n>`` within ``limit`` units, plus the suffix."""
    suffix = f"-{n}"
    return utf16_cut(base, max(1, limit - len(suffix))) + suffix


def assign_server_names(raw_names: Sequence[str]) -> list[str]:
    """Return the safe name of each configured server, in declaration order.

    Each name is sanitized with fallback ``mcp`` and cut to 30 units; a name
    that equals an earlier one case-insensitively gets ``-2``, ``-3``, ... with
    the base cut so the result stays within 30 units (``x y``, ``x-y``, ``x.y``
    give ``x-y``, ``x-y-2``, ``x-y-3``).
    """
    return list(_assign(tuple(raw_names)))


@functools.lru_cache(maxsize=16)
def _assign(raw_names: tuple[str, ...]) -> tuple[str, ...]:
    # Validation, compilation and rendering each ask for the same fleet's names in one pass.
    used: set[str] = set()
    assigned: list[str] = []
    for raw in raw_names:
        base = sanitize_fragment(raw, fallback=SERVER_NAME_FALLBACK, max_chars=SERVER_NAME_MAX)
        candidate = base
        n = 2
        while js_lower_key(candidate) in used:
            candidate = _with_suffix(base, n, SERVER_NAME_MAX)
            n += 1
        used.add(js_lower_key(candidate))
        assigned.append(candidate)
    return tuple(assigned)


def is_reserved_server_name(name: str) -> bool:
    """Return True if ``name`` (compared exactly, untrimmed) is in :data:`RESERVED_SERVER_NAMES`."""
    return name in RESERVED_SERVER_NAMES
