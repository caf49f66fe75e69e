"""UTF-16 code-unit arithmetic, so lengths and cuts match JavaScript strings.

OpenClaw measures and truncates names in UTF-16 code units (JavaScript's
``String.prototype.length`` and ``slice``). Python strings count code points,
so a character outside the Basic Multilingual Plane (most emoji) is one Python
character but two JavaScript units. The helpers here bridge the difference.
"""

from __future__ import annotations

__all__ = ["utf16_cut", "utf16_len", "utf16_sort_key"]

_BMP_MAX = 0xFFFF
_SUPPLEMENTARY_BASE = 0x10000
_HIGH_SURROGATE_BASE = 0xD800


def _units(ch: str) -> int:
    """Return how many UTF-16 code units one Python character takes (1 or 2)."""
    return 2 if ord(ch) > _BMP_MAX else 1


def _high_surrogate(ch: str) -> str:
    """Return the high (leading) surrogate of a supplementary character."""
    return chr(_HIGH_SURROGATE_BASE + ((ord(ch) - _SUPPLEMENTARY_BASE) >> 10))


def utf16_len(s: str) -> int:
    """Return the length of ``s`` in UTF-16 code units, as JavaScript's ``length``."""
    if s.isascii():
        return len(s)
    # Lone surrogates (a cut emoji) are one unit each, as in JavaScript: surrogatepass keeps them.
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def utf16_cut(s: str, n: int) -> str:
    """Return the first ``n`` UTF-16 code units of ``s``, like JavaScript ``s.slice(0, n)``.

    When the cut falls between the two halves of a surrogate pair, the result
    ends with the lone high surrogate, exactly as ``slice`` leaves it; it is
    represented by the Python surrogate code point (for example ``'\\ud83d'``
    for the first half of an emoji), so ``utf16_len(utf16_cut(s, n)) == n``
    whenever ``n <= utf16_len(s)``. Such a string cannot be encoded to UTF-8
    without ``errors="surrogatepass"``. ``n <= 0`` gives ``''`` (unlike
    ``slice``, a negative ``n`` does not count from the end).
    """
    if n <= 0:
        return ""
    if len(s) <= n and utf16_len(s) <= n:
        return s
    used = 0
    for index, ch in enumerate(s):
        width = _units(ch)
        if used + width > n:
            return s[:index] + (_high_surrogate(ch) if used < n else "")
        used += width
    return s


def utf16_sort_key(s: str) -> bytes:
    """Return a key that orders strings by UTF-16 code units, as JavaScript's default sort."""
    return s.encode("utf-16-be", "surrogatepass")
