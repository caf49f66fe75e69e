"""Claude Desktop's ``claude_desktop_config.json``: ``mcpServers.<name>`` with ``command``/``args``/``env``.

The file holds stdio servers only (remote ones are added in the app as custom connectors), so
hosted and remote servers are left out with a diagnostic. Claude Desktop expands no variables:
a secret reference has no form here and is left out with a diagnostic too, which makes a
server with ``valueFrom`` env unusable in this client unless it runs without that variable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawplane.diagnostics import Severity
from clawplane.models import McpServer, ValueFrom
from clawplane.render.clients.common import ClientContext, reaches

FILE = "claude_desktop_config.json"


def no_ref(_value: ValueFrom, _path: str) -> str | None:
    """Claude Desktop has no reference syntax."""
    return None


def render(servers: Sequence[McpServer], ctx: ClientContext) -> dict[str, Any]:
    """The ``claude_desktop_config.json`` document."""
    entries: dict[str, Any] = {}
    for r in reaches(servers, ctx):
        assert r.server is not None
        if r.kind != "stdio":
            ctx.diag(
                Severity.WARNING,
                "render.client-remote-unsupported",
                r.server,
                "Claude Desktop's config file holds only stdio servers; left out "
                f"(add {r.url} in the app as a custom connector)",
                "spec.hosting" if r.hosted else "spec.url",
                "or set hosting: consumer so Claude Desktop runs the command itself",
            )
            continue
        entry: dict[str, Any] = {"command": r.command, "args": list(r.args)}
        env = ctx.values(r.server, r.env, "env", no_ref)
        if env:
            entry["env"] = env
        entries[r.name] = entry
    return {"mcpServers": entries}
