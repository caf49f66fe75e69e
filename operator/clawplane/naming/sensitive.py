"""Spotting secrets written literally into MCP server config, and hiding URL credentials.

The key rule is the one ``openclaw mcp doctor`` (2026.9.6, ``src/cli/mcp-cli.ts``)
uses to warn ``headers.<K>``/``env.<K> contains a literal sensitive value``.
It is a warning, never a validation error.
"""

from __future__ import annotations

import re

from clawplane.jscompat.strings import js_lower_key, js_trim

__all__ = [
    "REDACTED",
    "SENSITIVE_HEADER_NAMES",
    "is_sensitive_key",
    "looks_like_literal_secret",
    "redact_url_userinfo",
]

REDACTED = "<redacted>"
"""Placeholder written in place of a secret."""

SENSITIVE_HEADER_NAMES = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "api_key"}
)
"""Keys that are sensitive when equal (after trim, case-insensitively) to one of these."""

# JavaScript's /i without the u flag folds ASCII only, and `$` means end of input:
# hence re.ASCII and \Z (Python's `$` would also match before a trailing newline).
_SENSITIVE_KEY_PATTERN = re.compile(
    r"(?:^|[_-])(?:api[_-]?key|authorization|bearer|password|secret|token)\Z",
    re.IGNORECASE | re.ASCII,
)

_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_SPECIAL_SCHEMES = frozenset({"http:", "https:", "ws:", "wss:", "ftp:", "file:"})


def is_sensitive_key(key: str) -> bool:
    """Return True if a header or env key names a secret, by ``mcp doctor``'s rule.

    Sensitive when the trimmed, lower-cased key is one of
    :data:`SENSITIVE_HEADER_NAMES`, or when the untrimmed key ends (after
    start, ``_`` or ``-``) with ``api-key``/``api_key``/``apikey``,
    ``authorization``, ``bearer``, ``password``, ``secret`` or ``token``,
    ignoring ASCII case. ``X-Session-Token`` and ``GITHUB_TOKEN`` are
    sensitive; ``TOKENS`` and ``mytoken`` are not.
    """
    return js_lower_key(key) in SENSITIVE_HEADER_NAMES or bool(_SENSITIVE_KEY_PATTERN.search(key))


def looks_like_literal_secret(key: str, value: object) -> bool:
    """Return True if ``value`` is a literal secret under a sensitive ``key``.

    The value must be a string that is not blank and, once trimmed, does not
    start with ``$`` (``$VAR``/``${VAR}`` references are fine). Numbers and
    booleans are never flagged, as in OpenClaw.
    """
    if not isinstance(value, str) or not is_sensitive_key(key):
        return False
    trimmed = js_trim(value)
    return bool(trimmed) and not trimmed.startswith("$")


def redact_url_userinfo(url: str) -> tuple[str, bool]:
    """Replace the ``user:password`` part of a URL with ``<redacted>``.

    Returns the URL (unchanged apart from the userinfo) and whether it had a
    non-empty userinfo. Only URLs of the form ``scheme://authority...`` are
    considered; the authority ends at ``/``, ``?``, ``#`` (and ``\\`` for
    special schemes such as http), and the userinfo runs up to its last ``@``,
    as WHATWG URL parsing does. ``https://u:p@h/x`` gives
    ``("https://<redacted>@h/x", True)``.
    """
    match = _URL_SCHEME.match(url)
    if match is None or not url.startswith("//", match.end()):
        return url, False
    start = match.end() + 2
    terminators = "/?#\\" if match.group().lower() in _SPECIAL_SCHEMES else "/?#"
    end = next((i for i in range(start, len(url)) if url[i] in terminators), len(url))
    at = url.rfind("@", start, end)
    if at <= start:
        return url, False
    return f"{url[:start]}{REDACTED}{url[at:]}", True
