"""Claude Code's project config ``.mcp.json``: ``mcpServers.<name>`` with ``type`` stdio, http or sse.

Claude Code expands ``${VAR}`` (and ``${VAR:-default}``) in ``command``, ``args``, ``env``,
``url`` and ``headers``, so ``valueFrom.env`` becomes ``${NAME}``; it has no file or Secret
reference, so those are left out with a diagnostic. It cannot filter a server's tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawplane.models import McpServer, ValueFrom
from clawplane.render.clients.common import ClientContext, reaches

FILE = ".mcp.json"


def env_ref(value: ValueFrom, _path: str) -> str | None:
    """``${NAME}`` for an environment reference."""
    name = value.value_from.env
    return f"${{{name}}}" if name else None


def render(servers: Sequence[McpServer], ctx: ClientContext) -> dict[str, Any]:
    """The ``.mcp.json`` document."""
    entries: dict[str, Any] = {}
    for r in reaches(servers, ctx):
        assert r.server is not None
        if r.kind == "stdio":
            entry: dict[str, Any] = {"type": "stdio", "command": r.command, "args": list(r.args)}
            env = ctx.values(r.server, r.env, "env", env_ref)
            if env:
                entry["env"] = env
        else:
            entry = {"type": r.kind, "url": r.url}
            headers = ctx.values(r.server, r.headers, "headers", env_ref)
            if headers:
                entry["headers"] = headers
        entries[r.name] = entry
    return {"mcpServers": entries}
