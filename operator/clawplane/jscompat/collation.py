"""Sort keys that order strings like JavaScript's ``a.localeCompare(b, "en")``.

OpenClaw sorts skills by name with ICU's collator for English (the CLDR root
order): case and accents are secondary to the letters, punctuation sorts before
digits and digits before letters (``_ - , ; : ! ? . ' "`` … ``0-9``, then
``aAbB…``). We call the system ICU library through ``ctypes`` when it can be
loaded, which gives exactly ICU's order. Without ICU a built-in table covers
ASCII exactly and orders other characters by their base letter, then by code
point; names outside Latin script may then sort differently from OpenClaw.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re
import unicodedata
from collections.abc import Callable
from typing import Any

__all__ = ["collation_backend", "locale_sort_key"]

_U_ZERO_ERROR = 0
_ICU_VERSIONS = range(90, 49, -1)

# ICU root order of printable ASCII, as Node 24 sorts it (verified against the oracle).
_ASCII_ORDER = "\t\n\v\f\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789"
_PRIMARY: dict[str, int] = {ch: index for index, ch in enumerate(_ASCII_ORDER)}
_LETTER_BASE = len(_ASCII_ORDER)
_OTHER_BASE = 10_000


class _Icu:
    """A loaded ICU collator for English."""

    def __init__(self, get_key: Callable[..., int], collator: ctypes.c_void_p) -> None:
        self._get_key = get_key
        self._collator = collator

    def key(self, text: str) -> bytes:
        """ICU's binary sort key of ``text``."""
        units = text.encode("utf-16-le", "surrogatepass")
        length = len(units) // 2
        source = ctypes.create_string_buffer(units, len(units) + 2)
        size = 64 + 4 * length
        while True:
            out = ctypes.create_string_buffer(size)
            needed = self._get_key(self._collator, source, length, out, size)
            if needed <= size:
                return out.raw[: max(needed - 1, 0)]
            size = needed


def _load_icu() -> _Icu | None:
    """Open ICU's ``en`` collator through the C API, or ``None`` when ICU is missing."""
    name = ctypes.util.find_library("icui18n")
    if not name:
        return None
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    match = re.search(r"\.so\.(\d+)", name)
    suffixes = ([f"_{match.group(1)}"] if match else []) + [""] + [f"_{v}" for v in _ICU_VERSIONS]
    for suffix in suffixes:
        opener = getattr(lib, f"ucol_open{suffix}", None)
        get_key = getattr(lib, f"ucol_getSortKey{suffix}", None)
        if opener is None or get_key is None:
            continue
        opener.restype = ctypes.c_void_p
        opener.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
        get_key.restype = ctypes.c_int32
        get_key.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_int32]
        status = ctypes.c_int(_U_ZERO_ERROR)
        collator = opener(b"en", ctypes.byref(status))
        if collator and status.value <= _U_ZERO_ERROR:
            return _Icu(get_key, ctypes.c_void_p(collator))
    return None


_ICU = _load_icu()


def collation_backend() -> str:
    """``"icu"`` when the system ICU collator is in use, else ``"builtin"``."""
    return "icu" if _ICU is not None else "builtin"


def _builtin_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Three-level key: base characters, then accents, then case (lower before upper)."""
    primary: list[int] = []
    secondary: list[int] = []
    tertiary: list[int] = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch):
            secondary.append(ord(ch))
            continue
        code = ord(ch)
        if ch in _PRIMARY:
            weight = _PRIMARY[ch]
        elif ch.isascii() and ch.isalpha():
            weight = _LETTER_BASE + 2 * (ord(ch.lower()) - ord("a"))
        elif code < 0x20 or code == 0x7F:
            continue  # control characters are ignorable in ICU
        else:
            weight = _OTHER_BASE + ord(ch.lower()[0])
        primary.append(weight)
        secondary.append(0)
        tertiary.append(1 if ch.isupper() else 0)
    return tuple(primary), tuple(secondary), tuple(tertiary)


@functools.lru_cache(maxsize=65536)
def locale_sort_key(text: str) -> Any:
    """A key such that sorting by it orders like ``localeCompare(…, "en")`` (stable on ties)."""
    if _ICU is not None:
        return _ICU.key(text)
    return _builtin_key(text)
