"""Reading an imported JSON or JSON5 file within limits, in time linear in its size.

The ``json5`` package parses one character at a time in Python (about 6 µs a character here:
a 4 MiB string took half a minute), and it and every walk after it recurse once per level of
nesting (200,000 levels ended in ``RecursionError``). So a file is first checked against
``MAX_IMPORT_BYTES`` and ``MAX_DEPTH`` by one flat scan (``check_limits``), then read by the
standard library's C parser: as it is when it is plain JSON (what OpenClaw writes), otherwise
after ``json5_as_json`` rewrote its JSON5 syntax (comments, trailing commas, bare keys,
single quotes, hex numbers, ...) into JSON with one regular-expression pass. Whatever that
rewrite does not know for sure goes to ``json5`` itself, which also words the syntax errors.
"""

from __future__ import annotations

import json
import re
from typing import Any

import json5

__all__ = ["MAX_DEPTH", "MAX_IMPORT_BYTES", "ImportLimitError", "check_limits", "json5_as_json", "load_json5"]

MAX_IMPORT_BYTES = 4 * 1024 * 1024
"""The largest file ``clawplane import`` reads (an OpenClaw config is a few kilobytes)."""
MAX_DEPTH = 64
"""The deepest nesting of objects and arrays it reads (OpenClaw's own keys go about 8 deep)."""


class ImportLimitError(ValueError):
    """A file beyond ``MAX_IMPORT_BYTES`` or ``MAX_DEPTH``; the message says which and what to do."""


def check_size(size: int, name: str) -> None:
    """Refuse ``size`` bytes when it is more than ``MAX_IMPORT_BYTES``."""
    if size > MAX_IMPORT_BYTES:
        raise ImportLimitError(
            f"{name} is {size / 1024 / 1024:.1f} MiB; clawplane imports files of up to "
            f"{MAX_IMPORT_BYTES // 1024 // 1024} MiB (a config is a few kilobytes): check that this is "
            "the config you meant, or remove what it does not need (large inline values) and import again"
        )


_SKIP_JSON5 = re.compile(
    r"""[^"'/\[\]{}]+|"[^"\\\n\r]*(?:\\[\s\S][^"\\\n\r]*)*"?|'[^'\\\n\r]*(?:\\[\s\S][^'\\\n\r]*)*'?"""
    r"|//[^\n]*|/\*[\s\S]*?(?:\*/|$)|/"
)
_SKIP_TOML = re.compile(
    r'''[^"'#\[\]{}]+|"""[\s\S]*?(?:"""|$)|\'\'\'[\s\S]*?(?:\'\'\'|$)|"[^"\\\n]*(?:\\.[^"\\\n]*)*"?'''
    r"|'[^'\n]*'?|#[^\n]*"
)


def check_limits(text: str, name: str, *, toml: bool = False) -> None:
    """Refuse ``text`` when it is too large or nested too deeply, before any parser recurses into it.

    Raises:
        ImportLimitError: It is; the message names the limit, where it is passed and the fix.
    """
    check_size(len(text.encode("utf-8", "surrogatepass")), name)
    skip = _SKIP_TOML if toml else _SKIP_JSON5
    depth = 0
    pos, end = 0, len(text)
    while pos < end:
        c = text[pos]
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, pos) + 1
                raise ImportLimitError(
                    f"{name}:{line}: objects and arrays nest more than {MAX_DEPTH} levels deep here; "
                    f"clawplane imports up to {MAX_DEPTH} (a config needs about 8): check that this is the "
                    "config you meant, or flatten the nesting and import again"
                )
            pos += 1
        elif c in "]}":
            depth = max(0, depth - 1)
            pos += 1
        else:
            found = skip.match(text, pos)
            pos = found.end() if found is not None and found.end() > pos else pos + 1


# One token of JSON5 at a time. Strings are matched whole (the unrolled loop takes a long
# string in one step); anything not listed here is left to json5.
_TOKEN = re.compile(
    r"""(?P<space>[\t\n\v\f\r \u00a0\ufeff\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+)"""
    r"|(?P<comment>//[^\n\r\u2028\u2029]*|/\*[\s\S]*?\*/)"
    r'|(?P<dq>"[^"\\\n\r]*(?:\\(?:\r\n|[\s\S])[^"\\\n\r]*)*")'
    r"|(?P<sq>'[^'\\\n\r]*(?:\\(?:\r\n|[\s\S])[^'\\\n\r]*)*')"
    r"|(?P<punct>[{}\[\]:,])"
    r"|(?P<number>[+-]?(?:0[xX][0-9a-fA-F]+|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?"
    r"|\.[0-9]+(?:[eE][+-]?[0-9]+)?|Infinity|NaN))(?![A-Za-z0-9_$])"
    r"|(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)"
)
_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(\r\n|[\s\S]))")
_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "0": "\0"}
_CONTINUATION = {"\n", "\r", "\r\n", "\u2028", "\u2029"}


class _NotSure(Exception):
    """Something the rewrite leaves to json5 (which parses it, or says what is wrong)."""


def _unescape(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        hex2, hex4, char = m.groups()
        if hex2 is not None:
            return chr(int(hex2, 16))
        if hex4 is not None:
            return chr(int(hex4, 16))
        if char in _CONTINUATION:
            return ""
        if char == "0" and body[m.end() : m.end() + 1].isdigit():
            raise _NotSure  # "\01" is no JSON5 escape
        if char in "123456789xu":
            raise _NotSure
        return _SIMPLE.get(char, char)

    return _ESCAPE.sub(one, body)


def _string(token: str) -> str:
    body = token[1:-1]
    if token[0] == '"' and "\\" not in body:
        return token  # already JSON (raw control characters: parsed with strict=False)
    return json.dumps(_unescape(body))


def _number(token: str) -> str:
    sign = "-" if token[0] == "-" else ""
    bare = token.lstrip("+-")
    if bare == "NaN":
        return "NaN"
    if bare == "Infinity":
        return f"{sign}Infinity"
    if bare[:2] in ("0x", "0X"):
        return f"{sign}{int(bare, 16)}"
    if bare.startswith("."):
        bare = "0" + bare
    mantissa, e, exponent = bare.partition("e") if "e" in bare else bare.partition("E")
    if mantissa.endswith("."):
        mantissa += "0"
    return f"{sign}{mantissa}{e}{exponent}"


def json5_as_json(text: str) -> str:
    """``text`` (JSON5) as JSON text with the same value.

    Raises:
        ValueError: Something this rewrite does not handle (the caller asks json5 instead).
    """
    out: list[str] = []
    # For each open container: is it an object, and does it expect a key next?
    stack: list[list[bool]] = []
    pos, end = 0, len(text)
    # The last two significant tokens written: a comma after a value is dropped at "}" or "]"
    # (a trailing comma); one after "[", "{" or another comma is an error json5 words.
    last = before = ""
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"offset {pos}: not rewritten")
        pos = m.end()
        kind, token = m.lastgroup, m.group()
        if kind in ("space", "comment"):
            continue
        expects_key = bool(stack) and stack[-1][0] and stack[-1][1]
        if kind == "punct":
            if token in "}]":
                if last == ",":
                    if before in ("", "[", "{", ",", ":"):
                        raise ValueError("a comma with no value before it")
                    out.pop()
                if not stack:
                    raise ValueError("unbalanced")
                stack.pop()
            elif token in "{[":
                if expects_key:
                    raise ValueError("a container where a key belongs")
                stack.append([token == "{", token == "{"])
            elif token == "," and stack:
                stack[-1][1] = stack[-1][0]
            elif token == ":" and stack:
                stack[-1][1] = False
            out.append(token)
            last, before = token, last
            continue
        try:
            if kind in ("dq", "sq"):
                written = _string(token)
            elif expects_key and kind == "name":
                written = json.dumps(token)
            elif expects_key:
                raise ValueError("a key that is not a string or a name")
            elif kind == "number":
                written = _number(token)
            elif token in ("true", "false", "null"):
                written = token
            else:
                raise ValueError(f"unknown word {token[:20]!r}")
        except _NotSure:
            raise ValueError("an escape left to json5") from None
        out.append(written)
        last, before = written, last
    return "".join(out)


def load_json5(text: str, name: str) -> Any:
    """The value of a JSON or JSON5 document (see the module docstring).

    Raises:
        ImportLimitError: It is too large or too deep.
        ValueError: It is not JSON5 (json5's message, with its line and column).
    """
    check_limits(text, name)
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        rewritten = json5_as_json(text)
        return json.loads(rewritten, strict=False)
    except ValueError:
        return json5.loads(text)  # the exact reading of whatever the rewrite is not sure of
