"""The MCP clients' own config files → McpServer resources, one ``EntryFormat`` per client.

Claude Code ``.mcp.json`` (``mcpServers``, ``${NAME}``), Claude Desktop
``claude_desktop_config.json`` (``mcpServers``, no references), VS Code ``.vscode/mcp.json``
(``servers``, ``${env:NAME}``, ``${input:id}`` prompts), Cursor ``.cursor/mcp.json``
(``mcpServers``, ``${env:NAME}``) and Gemini CLI ``settings.json`` (``mcpServers``, ``${NAME}`` or
``$NAME``, ``httpUrl``, ``includeTools``/``excludeTools``, ``timeout``, ``trust``). The files are
JSON with comments allowed (JSON5 is read), and every loss names its file:line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clawplane.interop.client_entries import (
    DOLLAR_BRACE,
    DOLLAR_BRACE_ANY,
    ENV_COLON,
    EntryFormat,
    import_entries,
)
from clawplane.interop.jsonload import load_json5
from clawplane.interop.positions import json5_positions
from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.result import ImportResult

_NEVER = re.compile(r"(?!)")
_GEMINI_REF = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")
_GEMINI_ANY = re.compile(r"\$(?:\{[^}]*\}|[A-Za-z_])")

FORMATS: dict[str, EntryFormat] = {
    "claude-code": EntryFormat("claude-code", "mcpServers", DOLLAR_BRACE, DOLLAR_BRACE_ANY),
    "claude-desktop": EntryFormat("claude-desktop", "mcpServers", _NEVER, _NEVER),
    "vscode": EntryFormat("vscode", "servers", ENV_COLON, DOLLAR_BRACE_ANY, frozenset({"envFile", "dev"})),
    "cursor": EntryFormat("cursor", "mcpServers", ENV_COLON, DOLLAR_BRACE_ANY),
    "gemini-cli": EntryFormat(
        "gemini-cli",
        "mcpServers",
        _GEMINI_REF,
        _GEMINI_ANY,
        frozenset({"httpUrl", "trust", "includeTools", "excludeTools", "timeout", "description"}),
    ),
}


def import_client_config(text: str, source: str, client: str) -> ImportResult:
    """Import one client config file's MCP servers."""
    doc = load_json5(text, source)
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: the top level must be an object")
    report = ImportReport(source, json5_positions(text))
    fmt = FORMATS[client]
    if client == "gemini-cli":
        doc = _gemini_urls(doc)
        return import_entries(doc, fmt, report, entry_hook=_gemini_entry)
    if client == "vscode":
        for i, item in enumerate(doc.get("inputs") or []):
            if isinstance(item, Mapping):
                report.info(
                    "import.prompt-input",
                    ("inputs", i),
                    f"VS Code prompts for {item.get('id')!r}; values that use it are not imported",
                )
        doc = {k: v for k, v in doc.items() if k != "inputs"}
    return import_entries(doc, fmt, report)


def _gemini_urls(doc: dict[str, Any]) -> dict[str, Any]:
    # httpUrl is Gemini's streamable-HTTP spelling; url + type "sse" its SSE one.
    servers = doc.get("mcpServers")
    if not isinstance(servers, Mapping):
        return doc
    fixed: dict[str, Any] = {}
    for name, entry in servers.items():
        if isinstance(entry, Mapping) and isinstance(entry.get("httpUrl"), str):
            rest = {k: v for k, v in entry.items() if k != "httpUrl"}
            entry = {**rest, "url": entry["httpUrl"], "type": "http"}
        fixed[name] = entry
    return {**doc, "mcpServers": fixed}


def _gemini_entry(
    entry: Mapping[str, Any], spec: dict[str, Any], path: ConfigPath, report: ImportReport
) -> None:
    tool_filter: dict[str, list[str]] = {}
    for key, field in (("includeTools", "include"), ("excludeTools", "exclude")):
        tools = entry.get(key)
        if isinstance(tools, list) and tools:
            tool_filter[field] = [t for t in tools if isinstance(t, str)]
    if tool_filter:
        spec["toolFilter"] = tool_filter
    timeout = entry.get("timeout")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        spec["requestTimeoutMs"] = int(timeout)
    if entry.get("trust") is True:
        report.warn(
            "import.trust",
            (*path, "trust"),
            "Gemini CLI skips confirmations for this server; clawplane's projections write trust: false",
        )
