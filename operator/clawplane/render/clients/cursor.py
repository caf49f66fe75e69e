"""Cursor's ``.cursor/mcp.json``: ``mcpServers.<name>``, stdio (``command``/``args``/``env``) or ``url``.

Cursor interpolates ``${env:NAME}`` in these fields, so ``valueFrom.env`` becomes that; file and
Secret references have no Cursor form and are left out with a diagnostic. Cursor picks the
remote transport itself (streamable HTTP, falling back to SSE), so remote entries carry no type.
It cannot filter a server's tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawplane.models import McpServer, ValueFrom
from clawplane.render.clients.common import ClientContext, reaches

FILE = "mcp.json"


def env_ref(value: ValueFrom, _path: str) -> str | None:
    """``${env:NAME}`` for an environment reference."""
    name = value.value_from.env
    return f"${{env:{name}}}" if name else None


def render(servers: Sequence[McpServer], ctx: ClientContext) -> dict[str, Any]:
    """The ``mcp.json`` document."""
    entries: dict[str, Any] = {}
    for r in reaches(servers, ctx):
        assert r.server is not None
        if r.kind == "stdio":
            entry: dict[str, Any] = {"command": r.command, "args": list(r.args)}
            env = ctx.values(r.server, r.env, "env", env_ref)
            if env:
                entry["env"] = env
        else:
            entry = {"url": r.url}
            headers = ctx.values(r.server, r.headers, "headers", env_ref)
            if headers:
                entry["headers"] = headers
        entries[r.name] = entry
    return {"mcpServers": entries}
