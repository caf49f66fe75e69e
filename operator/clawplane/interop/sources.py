"""Which importer reads a file: chosen by ``--format`` or recognised from its name and content.

Formats: ``openclaw`` (openclaw.json), ``claude-code`` (.mcp.json), ``claude-desktop``
(claude_desktop_config.json), ``vscode`` (.vscode/mcp.json), ``cursor`` (.cursor/mcp.json),
``gemini-cli`` (.gemini/settings.json), ``codex`` (config.toml) and ``mcp-registry`` (server.json).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from clawplane.interop.clients import FORMATS, import_client_config
from clawplane.interop.codex import import_codex_config
from clawplane.interop.jsonload import load_json5
from clawplane.interop.openclaw import OpenClawEnv, import_openclaw_config, load_openclaw_text
from clawplane.interop.registry import import_server_json
from clawplane.interop.result import ImportResult

Importer = Callable[[str, str, Path], ImportResult]
"""``(text, source name, path) → result``; raises ValueError when the text is not that format."""


def _openclaw(text: str, source: str, path: Path) -> ImportResult:
    data, positions = load_openclaw_text(text, source)
    return import_openclaw_config(data, source=source, positions=positions, env=OpenClawEnv.current(path))


def _client(client: str, text: str, source: str, _path: Path) -> ImportResult:
    return import_client_config(text, source, client)


IMPORTERS: dict[str, Importer] = {
    "openclaw": _openclaw,
    **{client: functools.partial(_client, client) for client in FORMATS},
    "codex": lambda text, source, _path: import_codex_config(text, source),
    "mcp-registry": lambda text, source, _path: import_server_json(text, source),
}
"""Every format ``clawplane import`` reads, by the name ``--format`` takes."""

_BY_NAME = {
    ".mcp.json": "claude-code",
    "claude_desktop_config.json": "claude-desktop",
    "server.json": "mcp-registry",
    "openclaw.json": "openclaw",
    "clawdbot.json": "openclaw",
}
_BY_PARENT = {
    (".vscode", "mcp.json"): "vscode",
    (".cursor", "mcp.json"): "cursor",
    (".gemini", "settings.json"): "gemini-cli",
    (".codex", "config.toml"): "codex",
}
_OPENCLAW_KEYS = {"agents", "skills", "mcp", "channels", "plugins", "tools", "bindings", "gateway", "meta"}


def detect_format(path: Path, text: str) -> str:
    """The format of ``path``: from its name where that is unambiguous, else from its top-level keys."""
    found = _BY_PARENT.get((path.parent.name, path.name)) or _BY_NAME.get(path.name)
    if found:
        return found
    if path.suffix == ".toml":
        return "codex"
    try:
        doc = load_json5(text, str(path))
    except ValueError:
        return "openclaw"  # the openclaw reader reports the syntax error
    if not isinstance(doc, dict):
        return "openclaw"
    if "servers" in doc and "mcpServers" not in doc:
        return "vscode"
    if "packages" in doc or "remotes" in doc or "server.schema.json" in str(doc.get("$schema", "")):
        return "mcp-registry"
    if "mcpServers" in doc and not _OPENCLAW_KEYS & set(doc):
        return "claude-code"
    return "openclaw"


def import_file(path: Path, *, format: str | None = None) -> ImportResult:
    """Import ``path``; raises OSError (unreadable) or ValueError (not that format, unknown format)."""
    text = path.read_text(encoding="utf-8")
    chosen = format or detect_format(path, text)
    importer = IMPORTERS.get(chosen)
    if importer is None:
        raise ValueError(f"unknown format {chosen!r}; choose one of {', '.join(sorted(IMPORTERS))}")
    result = importer(text, str(path), path)
    result.format = chosen
    return result
