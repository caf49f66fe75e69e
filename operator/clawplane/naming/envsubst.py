"""OpenClaw's ``${VAR}`` substitution in config strings, and how to write literals that survive it.

OpenClaw 2026.9.6 (src/config/env-substitution.ts) replaces ``${NAME}`` in every string of
openclaw.json with the environment variable ``NAME`` when ``NAME`` matches
``[A-Z_][A-Z0-9_]*``, and turns ``$${NAME}`` into the literal ``${NAME}``. Anything else
(lower-case names, an unclosed brace, a lone ``$``) is left alone. A rendered literal must
therefore escape exactly the spots that would otherwise be substituted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

ENV_NAME_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
"""Names OpenClaw substitutes in ``${NAME}``."""
SECRET_REF_ENV_ID_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,127}$")
"""Names an env SecretRef (``{source: "env", id}``) accepts."""


def _token_at(text: str, index: int) -> tuple[str, str, int] | None:
    """``(kind, name, end)`` of a ``${NAME}`` or ``$${NAME}`` token starting at ``index``."""
    if text[index] != "$":
        return None
    nxt = text[index + 1 : index + 2]
    after = text[index + 2 : index + 3]
    if nxt == "$" and after == "{":
        start = index + 3
        end = text.find("}", start)
        if end != -1 and ENV_NAME_RE.match(text[start:end]):
            return "escaped", text[start:end], end
    if nxt == "{":
        start = index + 2
        end = text.find("}", start)
        if end != -1 and ENV_NAME_RE.match(text[start:end]):
            return "substitution", text[start:end], end
    return None


def substitute(text: str, lookup: Callable[[str], str | None]) -> str:
    """``text`` as OpenClaw reads it: ``${NAME}`` → ``lookup(NAME)``, ``$${NAME}`` → ``${NAME}``."""
    if "$" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        token = _token_at(text, i) if text[i] == "$" else None
        if token is None:
            out.append(text[i])
            i += 1
            continue
        kind, name, end = token
        value = lookup(name) if kind == "substitution" else None
        out.append(value if value else "${" + name + "}")
        i = end + 1
    return "".join(out)


def substitute_env(text: str, environ: Mapping[str, str]) -> str:
    """``substitute`` against an environment mapping (unset and empty variables stay as written)."""
    return substitute(text, environ.get)


def escape_literal(text: str) -> str:
    """``text`` written so that OpenClaw's substitution gives back exactly ``text``."""
    if "$" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "$" and text[i + 1 : i + 2] == "{":
            token = _token_at(text, i)
            if token is not None:
                # "${NAME}" would be substituted: "$${NAME}" reads back as "${NAME}".
                out.append("$${" + token[1] + "}")
                i = token[2] + 1
                continue
        out.append(text[i])
        i += 1
    return "".join(out)


def env_reference(name: str) -> str:
    """The string OpenClaw replaces with environment variable ``name``."""
    return "${" + name + "}"


def whole_reference(text: str) -> str | None:
    """``NAME`` when ``text`` is exactly ``${NAME}`` (a whole-value env reference), else None."""
    if text.startswith("${") and text.endswith("}") and ENV_NAME_RE.match(text[2:-1]):
        return text[2:-1]
    return None


def has_substitution(text: str) -> bool:
    """True when OpenClaw would substitute something in ``text``."""
    found: list[str] = []

    def record(name: str) -> None:
        found.append(name)

    substitute(text, record)
    return bool(found)
