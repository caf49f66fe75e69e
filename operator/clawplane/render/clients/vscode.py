"""VS Code's ``.vscode/mcp.json``: ``servers.<name>`` with ``type`` stdio, http or sse, plus ``inputs[]``.

``valueFrom.env`` becomes ``${env:NAME}``; a file or Secret reference becomes a prompted,
password-style input (``inputs[]`` entry ``promptString`` with ``password: true``) referenced
as ``${input:<id>}``, so VS Code asks for the value once and keeps it in its secret storage.
VS Code cannot filter a server's tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawplane.models import McpServer, ValueFrom
from clawplane.render.clients.common import ClientContext, reaches

FILE = "mcp.json"


def render(servers: Sequence[McpServer], ctx: ClientContext) -> dict[str, Any]:
    """The ``mcp.json`` document."""
    inputs: list[dict[str, Any]] = []
    entries: dict[str, Any] = {}
    for r in reaches(servers, ctx):
        server = r.server
        assert server is not None

        def ref(value: ValueFrom, path: str, server: McpServer = server) -> str | None:
            if value.value_from.env:
                return f"${{env:{value.value_from.env}}}"
            field = path.removeprefix("spec.")
            input_id = f"{server.name}-{field.replace('.', '-')}"
            inputs.append(
                {
                    "type": "promptString",
                    "id": input_id,
                    "password": True,
                    "description": f"{field} of MCP server {server.name}",
                }
            )
            return f"${{input:{input_id}}}"

        if r.kind == "stdio":
            entry: dict[str, Any] = {"type": "stdio", "command": r.command, "args": list(r.args)}
            if r.cwd:
                entry["cwd"] = r.cwd
            env = ctx.values(server, r.env, "env", ref)
            if env:
                entry["env"] = env
        else:
            entry = {"type": r.kind, "url": r.url}
            headers = ctx.values(server, r.headers, "headers", ref)
            if headers:
                entry["headers"] = headers
        entries[r.name] = entry
    doc: dict[str, Any] = {"servers": entries}
    if inputs:
        doc["inputs"] = inputs
    return doc
