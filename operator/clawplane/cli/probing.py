"""What ``clawplane mcp probe`` needs besides the folder: a server given by URL, a tool call, output.

``--url`` makes a one-server target from the URL, ``--transport`` and ``--header 'K: V'`` (the
values count as secrets: every text the probe prints has them replaced by ``<redacted>``);
``--call NAME --args JSON`` names one tool to call. Text from the server is escaped before it
reaches the terminal, so control characters show as escapes instead of acting.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import typer

from clawplane.cli.console import EXIT_USAGE, err, out
from clawplane.models import McpServerSpec

if TYPE_CHECKING:
    from clawplane.runtimes import ProbeCallOutcome, ProbeTarget

__all__ = ["Secrets", "escape", "parse_args", "parse_headers", "print_call", "url_target"]

REDACTED = "<redacted>"
TRANSPORTS = ("streamable-http", "sse")


class Secrets:
    """The ``--header`` values, replaced by ``<redacted>`` in whatever is printed."""

    def __init__(self, values: Sequence[str] = ()) -> None:
        # Longest first, so a value that contains another is replaced whole.
        self._values = sorted({v for v in values if v}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        """``text`` with every known value replaced."""
        for value in self._values:
            text = text.replace(value, REDACTED)
        return text


def usage_error(message: str) -> typer.Exit:
    """Print ``message`` and give the exit for a wrong command line."""
    err.print(message, markup=False)
    return typer.Exit(EXIT_USAGE)


def parse_headers(raw: Sequence[str]) -> dict[str, str]:
    """``['K: V', …]`` as a mapping; a malformed entry is a usage error."""
    headers: dict[str, str] = {}
    for entry in raw:
        key, sep, value = entry.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or not key or any(c.isspace() for c in key):
            name = escape(key) or "(empty)"
            raise usage_error(f"--header {name}…: expected 'Name: value', e.g. --header 'X-Team: core'")
        headers[key] = value
    return headers


def parse_args(raw: str | None) -> dict[str, Any]:
    """The ``--args`` JSON object (``{}`` when not given); anything else is a usage error."""
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise usage_error(
            f"--args is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            """give the tool's arguments as a JSON object, e.g. --args '{"message": "hi"}'"""
        ) from None
    if not isinstance(value, dict):
        raise usage_error(
            f"--args must be a JSON object of the tool's arguments, not {type(value).__name__}; "
            """e.g. --args '{"message": "hi"}'"""
        )
    return value


def url_target(url: str, transport: str, headers: dict[str, str]) -> ProbeTarget:
    """A probe target for the server at ``url``, named after its host."""
    from clawplane.runtimes import ProbeTarget  # the MCP SDK is slow to import; only probing needs it

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise usage_error(f"--url {escape(url)}: expected an http:// or https:// URL of an MCP server")
    if transport not in TRANSPORTS:
        raise usage_error(f"--transport {escape(transport)}: expected one of {', '.join(TRANSPORTS)}")
    spec = McpServerSpec.model_validate({"url": url, "transport": transport, "headers": headers})
    return ProbeTarget(name=parts.hostname, spec=spec, base_dir=Path.cwd())


def escape(text: str) -> str:
    """``text`` with control and other unprintable characters (newlines, tabs kept) as escapes."""
    return "".join(
        ch if ch.isprintable() or ch in "\n\t" else ch.encode("unicode_escape").decode("ascii") for ch in text
    )


def print_call(outcome: ProbeCallOutcome, redact: Secrets) -> None:
    """The call's result content (text as is, other blocks as JSON), escaped, or its error on stderr."""
    head = f"call {outcome.server}/{outcome.tool}"
    if outcome.result is None:
        return
    state = " (the tool reported an error)" if outcome.result.is_error else ""
    out.print(redact(escape(f"{head}{state}:")), markup=False)
    for block in outcome.result.content:
        if block.get("type") == "text":
            text = str(block.get("text", ""))
        else:
            text = json.dumps(dict(block), ensure_ascii=False)
        out.print(redact(escape(text)), markup=False, highlight=False, soft_wrap=True)
    if outcome.result.structured_content is not None:
        structured = json.dumps(dict(outcome.result.structured_content), ensure_ascii=False)
        out.print(redact(escape(f"structured: {structured}")), markup=False, highlight=False, soft_wrap=True)
