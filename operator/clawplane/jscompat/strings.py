"""JavaScript string normalizations that OpenClaw applies before comparing names.

``String.prototype.trim`` removes a different set of characters than Python's
``str.strip``: it removes U+FEFF but keeps U+001C-U+001F and U+0085, for
example. Name comparison in OpenClaw goes through ``trim()`` followed by
``toLowerCase()``; both are reproduced here.
"""

from __future__ import annotations

__all__ = ["JS_WHITESPACE", "js_lower_key", "js_trim"]

JS_WHITESPACE = (
    "\t\n\v\f\r "  # ASCII whitespace and line terminators
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""Characters JavaScript ``trim()`` removes: WhiteSpace (with category Zs) and LineTerminator."""


def js_trim(s: str) -> str:
    """Strip leading and trailing whitespace exactly as JavaScript ``String.prototype.trim``."""
    return s.strip(JS_WHITESPACE)


def js_lower_key(s: str) -> str:
    """Return the case-insensitive comparison key OpenClaw uses: ``s.trim().toLowerCase()``."""
    return js_trim(s).lower()
