"""JavaScript's rules where OpenClaw relies on them: strings, UTF-16, values and collation.

- ``strings`` — ``String.prototype.trim`` and ``toLowerCase`` as names are compared.
- ``utf16`` — lengths, cuts and order in UTF-16 code units, as JavaScript strings count.
- ``values`` — ``String(value)`` and ``JSON.stringify`` of parsed YAML and JSON values.
- ``collation`` — the one ``localeCompare``: ICU's collator when the system has it (skills by
  name, tools before naming them), else a built-in table exact for ASCII.

The collation names resolve on first use: finding ICU asks the dynamic loader, which the
string helpers' many users (``naming``, the validator) must not pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawplane._utils.lazy import LazyNames
from clawplane.jscompat.strings import JS_WHITESPACE, js_lower_key, js_trim
from clawplane.jscompat.utf16 import utf16_cut, utf16_len, utf16_sort_key
from clawplane.jscompat.values import (
    js_number,
    js_object_keys,
    js_string,
    js_truthy_string,
    json_stringify,
    json_type,
    normalize_string_list,
)

if TYPE_CHECKING:
    from clawplane.jscompat.collation import collation_backend, locale_sort_key

_HOMES = {
    "collation_backend": "clawplane.jscompat.collation",
    "locale_sort_key": "clawplane.jscompat.collation",
}

__all__ = [
    "JS_WHITESPACE",
    "collation_backend",
    "js_lower_key",
    "js_number",
    "js_object_keys",
    "js_string",
    "js_trim",
    "js_truthy_string",
    "json_stringify",
    "json_type",
    "locale_sort_key",
    "normalize_string_list",
    "utf16_cut",
    "utf16_len",
    "utf16_sort_key",
]

_names = LazyNames(__name__, _HOMES, globals())
__getattr__ = _names.getattr
__dir__ = _names.dir
