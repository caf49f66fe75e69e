"""Editing McpServer documents like ``openclaw mcp set/unset`` edits ``mcp.servers``.

Pure logic, no CLI: :func:`canonicalize` mirrors OpenClaw's ``mcp set`` normalization,
:func:`find_servers` reads every McpServer document under a path (spec as written),
and :func:`set_server_text` / :func:`remove_server_text` edit one file's text. Only the
edited document is re-dumped (ruamel round-trip, comments on kept keys survive); every
other document, comment and separator of the file stays byte-for-byte.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from clawplane.diagnostics import Diagnostics
from clawplane.editing.fixes import load_documents, rt_yaml
from clawplane.loading import discover_files
from clawplane.models import API_VERSION
from clawplane.naming import is_sensitive_key

KIND = "McpServer"
REDACTED = "<redacted>"

# What ``openclaw mcp set`` renames (src/config/mcp-config-normalize.ts); canonical wins.
SET_RENAMES: dict[str, str] = {
    "workingDirectory": "cwd",
    "supports_parallel_tool_calls": "supportsParallelToolCalls",
    "ssl_verify": "sslVerify",
    "client_cert": "clientCert",
    "client_key": "clientKey",
}
SET_CODEX_RENAMES: dict[str, str] = {"default_tools_approval_mode": "defaultToolsApprovalMode"}
_TYPE_ALIASES: dict[str, str] = {
    "http": "streamable-http",
    "streamable-http": "streamable-http",
    "sse": "sse",
    "stdio": "stdio",
}
_SEPARATOR = re.compile(r"^---(?=[ \t]|$)", re.MULTILINE)


def canonicalize(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The server object ``openclaw mcp set`` would store for ``raw`` (new keys appended)."""
    server: dict[str, Any] = dict(raw)
    kind = server.get("type")
    if isinstance(kind, str):
        alias = _TYPE_ALIASES.get(kind.strip().lower())
        if alias is not None:
            if not isinstance(server.get("transport"), str) and alias in ("sse", "streamable-http"):
                server["transport"] = alias
            del server["type"]
    for old, new in SET_RENAMES.items():
        if old in server:
            value = server.pop(old)
            server.setdefault(new, value)
    codex = server.get("codex")
    if isinstance(codex, Mapping):
        fixed = dict(codex)
        for old, new in SET_CODEX_RENAMES.items():
            if old in fixed:
                value = fixed.pop(old)
                fixed.setdefault(new, value)
        server["codex"] = fixed
    return server


def to_plain(node: Any) -> Any:
    """Round-trip YAML nodes as plain JSON-ready Python values."""
    if isinstance(node, Mapping):
        return {str(k): to_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [to_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def redact(server: Mapping[str, Any]) -> dict[str, Any]:
    """Literal values of sensitive ``env``/``headers`` keys replaced by ``<redacted>``.

    ``valueFrom`` references name where a secret lives, not the secret, so they are shown.
    """
    shown = dict(server)
    for field in ("env", "headers"):
        values = shown.get(field)
        if isinstance(values, Mapping):
            shown[field] = {
                k: (REDACTED if is_sensitive_key(str(k)) and not isinstance(v, Mapping | list) else v)
                for k, v in values.items()
            }
    return shown


@dataclass
class ServerDoc:
    """One McpServer document: its file, index among the file's documents, and raw spec."""

    name: str
    file: Path
    spec: dict[str, Any]


def _is_server(doc: Any) -> bool:
    return (
        isinstance(doc, Mapping)
        and doc.get("kind") == KIND
        and isinstance(doc.get("metadata"), Mapping)
        and isinstance(doc["metadata"].get("name"), str)
    )


def find_servers(path: str | os.PathLike[str]) -> dict[str, ServerDoc]:
    """Every McpServer document under ``path`` by name (first one wins); unparsable files are skipped."""
    found: dict[str, ServerDoc] = {}
    for file in discover_files([path], Diagnostics()):
        try:
            docs = load_documents(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, YAMLError):
            continue
        for doc in docs:
            if _is_server(doc):
                name = str(doc["metadata"]["name"])
                spec = doc.get("spec")
                plain = to_plain(spec) if isinstance(spec, Mapping) else {}
                found.setdefault(name, ServerDoc(name, file, plain))
    return found


def _regions(text: str) -> list[tuple[int, int, Any]]:
    """``(start, end, document)`` text spans of the non-empty documents of ``text``."""
    docs = [d for d in load_documents(text) if d is not None]
    seps = [m.start() for m in _SEPARATOR.finditer(text)]
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    spans: list[tuple[int, int, Any]] = []
    prev_end = 0
    for doc in docs:
        line = getattr(getattr(doc, "lc", None), "line", None)
        if line is None:
            raise ValueError("cannot locate a document that is not a mapping or sequence")
        begin = line_starts[line]
        before = [s for s in seps if prev_end <= s <= begin]
        start = before[-1] if before else begin
        after = [s for s in seps if s > begin]
        end = after[0] if after else len(text)
        spans.append((start, end, doc))
        prev_end = end
    return spans


def _find(text: str, name: str) -> tuple[int, int, Any] | None:
    for start, end, doc in _regions(text):
        if _is_server(doc) and doc["metadata"]["name"] == name:
            return start, end, doc
    return None


def _dump(doc: Any) -> str:
    yaml = rt_yaml()
    yaml.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    yaml.dump(doc, buf)
    return buf.getvalue()


def _merge_spec(old: Any, new: Mapping[str, Any]) -> CommentedMap:
    """``new`` in its own key order, reusing ``old``'s unchanged nodes and their comments."""
    merged = CommentedMap()
    old_map = old if isinstance(old, CommentedMap) else CommentedMap()
    for key, value in new.items():
        if key in old_map and to_plain(old_map[key]) == value:
            merged[key] = old_map[key]
        else:
            merged[key] = _to_node(value)
        comment = old_map.ca.items.get(key)
        if key in old_map and comment is not None:
            merged.ca.items[key] = comment
    if old_map.ca.comment is not None:
        merged.ca.comment = old_map.ca.comment
    return merged


def _to_node(value: Any) -> Any:
    if isinstance(value, Mapping):
        node = CommentedMap()
        for k, v in value.items():
            node[k] = _to_node(v)
        return node
    if isinstance(value, list):
        return CommentedSeq([_to_node(v) for v in value])
    return value


def new_document(name: str, spec: Mapping[str, Any]) -> str:
    """A fresh McpServer document (without a ``---`` line)."""
    doc = CommentedMap()
    doc["apiVersion"] = API_VERSION
    doc["kind"] = KIND
    doc["metadata"] = CommentedMap(name=name)
    doc["spec"] = _to_node(spec)
    return _dump(doc)


def set_server_text(text: str, name: str, spec: Mapping[str, Any]) -> str:
    """``text`` with server ``name``'s spec replaced by ``spec`` (or a new document appended)."""
    found = _find(text, name) if text.strip() else None
    if found is None:
        body = new_document(name, spec)
        if not text.strip():
            return body
        sep = "" if text.endswith("\n") else "\n"
        return f"{text}{sep}---\n{body}"
    start, end, _doc = found
    head = ""
    rest_start = start
    if _SEPARATOR.match(text, start):
        nl = text.find("\n", start)
        rest_start = end if nl < 0 else min(nl + 1, end)
        head = text[start:rest_start]
        if not head.endswith("\n"):
            head += "\n"
    # Re-read the document alone, so comments of its neighbours (or its "---" line) stay out.
    doc = next(d for d in load_documents(text[rest_start:end]) if d is not None)
    doc["spec"] = _merge_spec(doc.get("spec"), spec)
    return text[:start] + head + _dump(doc) + text[end:]


def remove_server_text(text: str, name: str) -> str | None:
    """``text`` without server ``name``'s document; None when it was not there."""
    found = _find(text, name)
    if found is None:
        return None
    start, end, _doc = found
    rest = text[:start] + text[end:]
    if start == 0 and not _SEPARATOR.match(text, 0):
        # the first document had no "---": drop the separator that now leads the file
        m = _SEPARATOR.match(rest)
        if m is not None:
            nl = rest.find("\n")
            rest = "" if nl < 0 else rest[nl + 1 :]
    return rest


def has_documents(text: str) -> bool:
    """True when ``text`` still holds a non-empty YAML document."""
    return any(d is not None for d in load_documents(text))


__all__ = [
    "REDACTED",
    "SET_CODEX_RENAMES",
    "SET_RENAMES",
    "ServerDoc",
    "canonicalize",
    "find_servers",
    "has_documents",
    "new_document",
    "redact",
    "remove_server_text",
    "set_server_text",
    "to_plain",
]
