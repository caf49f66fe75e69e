"""Gemini CLI's ``settings.json``: ``mcpServers.<name>`` for stdio, ``httpUrl`` or ``url`` + ``type: sse``.

Streamable-HTTP servers get ``httpUrl`` and SSE servers ``url`` with ``type: "sse"`` (a bare
``url`` means streamable HTTP in current Gemini CLI and SSE in older ones). Gemini CLI expands
``${NAME}`` in settings values, so ``valueFrom.env`` becomes that; file and Secret references are
left out with a diagnostic. Every entry has ``trust: false`` (tool calls are confirmed). The
server's ``toolFilter`` becomes ``includeTools``/``excludeTools``, which take exact names: ``*``
globs are expanded over the tools clawplane discovered, and with no discovered tools yet the
server is left out rather than exposing what the filter hides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawplane.diagnostics import Severity
from clawplane.models import McpServer, ValueFrom
from clawplane.naming import is_tool_allowed
from clawplane.render.clients.common import ClientContext, Reach, reaches

FILE = "settings.json"


def env_ref(value: ValueFrom, _path: str) -> str | None:
    """``${NAME}`` for an environment reference."""
    name = value.value_from.env
    return f"${{{name}}}" if name else None


def render(servers: Sequence[McpServer], ctx: ClientContext) -> dict[str, Any]:
    """The ``settings.json`` document (only its ``mcpServers``)."""
    entries: dict[str, Any] = {}
    for r in reaches(servers, ctx, filters_tools=True):
        server = r.server
        assert server is not None
        if r.kind == "stdio":
            entry: dict[str, Any] = {"command": r.command, "args": list(r.args)}
            if r.cwd:
                entry["cwd"] = r.cwd
            env = ctx.values(server, r.env, "env", env_ref)
            if env:
                entry["env"] = env
        else:
            entry = {"httpUrl": r.url} if r.kind == "http" else {"url": r.url, "type": "sse"}
            headers = ctx.values(server, r.headers, "headers", env_ref)
            if headers:
                entry["headers"] = headers
        if "request_timeout_ms" in server.spec.model_fields_set:
            entry["timeout"] = server.spec.request_timeout_ms
        if not r.hosted and not _tool_lists(entry, r, ctx):
            continue
        entry["trust"] = False
        entries[r.name] = entry
    return {"mcpServers": entries}


def _tool_lists(entry: dict[str, Any], r: Reach, ctx: ClientContext) -> bool:
    """Write the tool filter as includeTools/excludeTools; False when it cannot be written."""
    server = r.server
    assert server is not None
    flt = server.spec.tool_filter
    if flt is None:
        return True
    patterns = [*(flt.include or []), *(flt.exclude or [])]
    if not any("*" in p for p in patterns):
        if flt.include is not None:
            entry["includeTools"] = list(flt.include)
        if flt.exclude is not None:
            entry["excludeTools"] = list(flt.exclude)
        return True
    tools = (ctx.discovered_tools or {}).get(server.name)
    if tools is None:
        ctx.diag(
            Severity.WARNING,
            "render.client-tool-globs",
            server,
            "Gemini CLI matches exact tool names and the server's tools are not known yet; left out",
            "spec.toolFilter",
        )
        return False
    entry["includeTools"] = [t for t in tools if is_tool_allowed(t, include=flt.include, exclude=flt.exclude)]
    return True
