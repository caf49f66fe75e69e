"""Redaction by value, in every form a value takes on its way into a message.

A secret rarely leaks verbatim: an HTTP library quotes an illegal header as a Python bytes
literal (``b'tok\\r\\nen'``), a JSON document escapes it, a URL percent-encodes it, and a
two-line token shows up one line at a time. ``secret_forms`` lists those forms, and
``ValueRedactor`` replaces all of them with ``<redacted>`` in one regular-expression pass.

``KNOWN`` is this process's registry of every value the resolver handed out (in memory
only, never written anywhere). Everything stored or logged passes ``redact``, which uses it,
so a value that reached a runtime cannot come back out through an error, a status row, an
audit detail or a log line.

Only values are ever rewritten, never structure: ``redact_data`` walks a parsed document and
leaves its keys, and the identifier-shaped values of its protocol fields (``STRUCTURAL_KEYS``:
``op``, ``event``, ``phase``, ``status``, ...), as they are, and no substitution ever cuts into an
issued bearer token or an earlier ``<redacted>``. A secret that happens to be a common word
(``final``, ``true``, ``error``) or the first characters of a token therefore costs a few words of
free text at worst; it cannot break a reply, a state row or a rendered token.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

from clawplane.naming import REDACTED

__all__ = [
    "KNOWN",
    "MIN_SECRET_CHARS",
    "STRUCTURAL_KEYS",
    "TOKEN_PREFIX",
    "KnownSecrets",
    "ValueRedactor",
    "redact",
    "redact_data",
    "scrub_tokens",
    "secret_forms",
]

TOKEN_PREFIX = "clawplane_"
"""Every bearer token clawplane issues starts with this, so it can be recognised anywhere."""
TOKEN_BODY_CHARS = 43
"""An issued token is the prefix and ``secrets.token_urlsafe(32)``: exactly 43 URL-safe characters."""
# The issued shape, not inside a longer word, with an upper-case letter or a digit somewhere (43
# random characters have one with certainty 1 - (28/64)^43): identifiers that merely start with
# the prefix (a module ``clawplane_test_module``, a metric ``clawplane_runtime_restarts``) stay.
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_-])"
    + re.escape(TOKEN_PREFIX)
    + rf"(?=[A-Za-z0-9_-]{{0,{TOKEN_BODY_CHARS - 1}}}[A-Z0-9])[A-Za-z0-9_-]{{{TOKEN_BODY_CHARS}}}"
)


def scrub_tokens(text: str) -> str:
    """``text`` with every clawplane bearer token replaced by ``<redacted>``."""
    return _TOKEN.sub(REDACTED, text) if TOKEN_PREFIX in text else text


MIN_SECRET_CHARS = 4
"""Values (and lines of values) shorter than this occur too easily by accident to be replaced."""
_MAX_KNOWN = 4096


def _encodings(text: str) -> set[str]:
    forms = {
        text,
        json.dumps(text)[1:-1],
        json.dumps(text, ensure_ascii=False)[1:-1],
        repr(text)[1:-1],
        repr(text.encode("utf-8"))[2:-1],
        quote(text, safe=""),
        quote(text),
        quote_plus(text),
    }
    # A value inside a quoted repr or JSON string nested once more (an error quoting an error).
    forms.add(json.dumps(json.dumps(text)[1:-1])[1:-1])
    forms.add(repr(repr(text)[1:-1])[1:-1])
    return forms


def secret_forms(value: str) -> set[str]:
    """Every form of ``value`` to replace: raw, repr, bytes repr, JSON, URL-encoded, per line."""
    forms = _encodings(value) if len(value) >= MIN_SECRET_CHARS else set()
    lines = [line.strip() for line in re.split(r"\r\n|\r|\n", value)]
    if len(lines) > 1:
        for line in lines:
            if len(line) >= MIN_SECRET_CHARS:
                forms |= _encodings(line)
    return {f for f in forms if len(f) >= MIN_SECRET_CHARS}


# What a substitution must never cut into: an issued token (its first characters may well be a
# value someone uses as a secret) and the marker an earlier pass left.
_KEEP = f"(?P<keep>{re.escape(REDACTED)}|{_TOKEN.pattern})"


class ValueRedactor:
    """Replaces every form of a set of values with ``<redacted>``."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        forms: set[str] = set()
        for value in values:
            forms |= secret_forms(value)
        # Longest first: a form that contains another is replaced whole.
        ordered = sorted(forms, key=len, reverse=True)
        alternatives = "|".join(map(re.escape, ordered))
        self._forms = re.compile(alternatives) if ordered else None
        self._pattern = re.compile(f"{_KEEP}|{alternatives}") if ordered else None
        self.values = frozenset(values)

    def __call__(self, text: str) -> str:
        """``text`` with every known form replaced (tokens and earlier markers left whole)."""
        if self._pattern is None or self._forms is None or not text:
            return text
        pieces: list[str] = []
        pos = 0
        while (found := self._pattern.search(text, pos)) is not None:
            start, end = found.span()
            pieces.append(text[pos:start])
            if found.group("keep") is not None:
                # A form that starts here and covers the whole token (the token itself is the
                # secret, or a longer value holds it) is a secret all the same.
                longer = self._forms.match(text, start)
                if longer is not None and longer.end() >= end:
                    pieces.append(REDACTED)
                    end = longer.end()
                else:
                    pieces.append(found.group())
            else:
                pieces.append(REDACTED)
            pos = end
        pieces.append(text[pos:])
        return "".join(pieces)

    def __bool__(self) -> bool:
        return self._pattern is not None


class KnownSecrets:
    """The values this process resolved (thread-safe; bounded; never persisted)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, None] = {}
        self._redactor = ValueRedactor()

    def add(self, value: str) -> None:
        """Remember ``value`` as a secret for ``redact``."""
        if len(value) < MIN_SECRET_CHARS and "\n" not in value and "\r" not in value:
            return
        with self._lock:
            if value in self._values:
                return
            self._values[value] = None
            while len(self._values) > _MAX_KNOWN:
                self._values.pop(next(iter(self._values)))
            self._redactor = ValueRedactor(self._values)

    def redactor(self) -> ValueRedactor:
        """A redactor for every value known now."""
        return self._redactor

    def clear(self) -> None:
        """Forget every value (tests)."""
        with self._lock:
            self._values.clear()
            self._redactor = ValueRedactor()


KNOWN = KnownSecrets()


def redact(text: str) -> str:
    """``text`` with every form of every value this process resolved, and every bearer token, replaced."""
    # Tokens first: a value that is a token's first characters must not leave its rest behind.
    return KNOWN.redactor()(scrub_tokens(text))


STRUCTURAL_KEYS = frozenset(
    {
        "op", "event", "final", "ok", "action", "result", "phase", "runtimePhase", "status", "type",
        "kind", "severity", "code", "outcome", "decision", "key", "id", "approval", "transport",
        "hosting", "apiVersion", "format_version",
    }
)  # fmt: skip
"""Fields whose values are protocol vocabulary or identifiers that readers compare (an event's
``event``, a change's ``action``, a condition's ``status``, a resource ``key``): never rewritten."""
_WORD = re.compile(r"[A-Za-z0-9_.:/@+-]{1,200}")


def redact_data(value: Any) -> Any:
    """A JSON-like structure with ``redact``'s value substitution applied to its string values.

    Keys are never rewritten, nor the identifier-shaped values of ``STRUCTURAL_KEYS`` (see the
    module docstring); bearer tokens stay as they are (replies that hand one out need it whole).
    """
    redactor = KNOWN.redactor()
    if not redactor:
        return value

    def walk(item: Any, key: object = None) -> Any:
        if isinstance(item, str):
            if key in STRUCTURAL_KEYS and _WORD.fullmatch(item):
                return item
            return redactor(item)
        if isinstance(item, dict):
            return {k: walk(v, k) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v, key) for v in item]
        return item

    return walk(value)
