"""Plain YAML scalars as the loader reads them: integers (``0o``/``0x``, ``_`` separators) and floats.

The resolver only says a scalar is an int or a float; these give its value, or the text
unchanged when it is not one after all.
"""

from __future__ import annotations

import math
import re

__all__ = ["yaml_float", "yaml_int"]

_INT_RE = re.compile(r"^[-+]?(0o[0-7]+|0x[0-9a-fA-F]+|[0-9]+)$")


def yaml_int(text: str) -> int | str:
    """The integer ``text`` spells, else ``text``."""
    clean = text.replace("_", "")
    if not _INT_RE.match(clean):
        return text
    sign = -1 if clean.startswith("-") else 1
    digits = clean.lstrip("+-")
    if digits.startswith("0o"):
        return sign * int(digits[2:], 8)
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    return sign * int(digits)


def yaml_float(text: str) -> float | str:
    """The float ``text`` spells (``.inf``, ``.nan`` too), else ``text``."""
    lowered = text.lower()
    if lowered in (".inf", "+.inf"):
        return math.inf
    if lowered == "-.inf":
        return -math.inf
    if lowered == ".nan":
        return math.nan
    try:
        return float(text.replace("_", ""))
    except ValueError:
        return text
