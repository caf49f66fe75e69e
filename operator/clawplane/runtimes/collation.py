"""Sort keys that approximate JavaScript's ``localeCompare`` (ICU root collation).

OpenClaw orders catalog entries with ``a.localeCompare(b)`` before assigning tool names, so
the order decides which of two colliding tools gets the ``-2`` suffix. ICU's root collation
compares in three passes: base characters (whitespace < punctuation < symbols < digits <
letters, letters case- and accent-blind), then accents, then case (lower before upper).
``locale_key`` reproduces that for the characters names are made of. It is checked against
Node's ``localeCompare`` in tests/compat; characters outside ASCII letters, digits and
punctuation fall back to code-point order within their group.
"""

from __future__ import annotations

import unicodedata

__all__ = ["locale_key"]

# ICU root order of the ASCII punctuation and symbols (measured with Node 20 and 24).
_ASCII_PUNCTUATION = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PUNCTUATION_RANK = {ch: index for index, ch in enumerate(_ASCII_PUNCTUATION)}
_WHITESPACE, _PUNCTUATION, _SYMBOL, _DIGIT, _LETTER = range(5)
# Letters ICU sorts as two letters (``ß`` as ``ss``).
_EXPANSIONS = {"ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE"}

Key = tuple[tuple[tuple[int, int], ...], tuple[tuple[int, ...], ...], tuple[int, ...]]


def _primary(ch: str) -> tuple[int, int] | None:
    """The base weight of one character, or None when the collation ignores it."""
    if ch in _PUNCTUATION_RANK:
        return (_PUNCTUATION, _PUNCTUATION_RANK[ch])
    if ch.isspace():
        return (_WHITESPACE, ord(ch))
    if ch.isdigit():
        return (_DIGIT, unicodedata.digit(ch, 0))
    if ch.isalpha():
        return (_LETTER, ord(ch.lower()))
    if unicodedata.category(ch) == "Cc":
        return None
    return (_SYMBOL, ord(ch))


def locale_key(text: str) -> Key:
    """A key whose order matches ``localeCompare`` on names (see the module docstring)."""
    primary: list[tuple[int, int]] = []
    accents: list[tuple[int, ...]] = []
    case: list[int] = []
    for original in unicodedata.normalize("NFD", text):
        if unicodedata.combining(original):
            if accents:
                accents[-1] = (*accents[-1], ord(original))
            continue
        # An expanded letter sorts right after its spelled-out form ("ss" < "ß").
        expanded = original in _EXPANSIONS
        for ch in _EXPANSIONS.get(original, original):
            weight = _primary(ch)
            if weight is None:
                continue
            primary.append(weight)
            accents.append(())
            case.append(2 * ch.isupper() + expanded)
    return tuple(primary), tuple(accents), tuple(case)
