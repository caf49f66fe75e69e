"""MCP client projections: one small module per client, each rendering one agent's config file.

``CLIENTS`` names every client, the file it reads and its renderer; ``render_client_configs``
writes them under ``clients/<client>/<agent>/<file>``. Only servers with ``spec.clients`` that
the agent uses are projected (see ``common.projected``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawplane.diagnostics import Diagnostic
from clawplane.models import McpClient, McpServer
from clawplane.render.clients import claude_code, claude_desktop, cursor, gemini, vscode
from clawplane.render.clients.common import (
    AuthFor,
    ClientContext,
    consumer_id,
    hosted_auth_header,
    hosted_servers,
    projected,
)


@dataclass(frozen=True)
class ClientFormat:
    """One client: the file it reads and how to render it."""

    client: McpClient
    file: str
    render: Callable[[Sequence[McpServer], ClientContext], dict[str, Any]]


CLIENTS: dict[McpClient, ClientFormat] = {
    f.client: f
    for f in (
        ClientFormat(McpClient.CLAUDE_CODE, claude_code.FILE, claude_code.render),
        ClientFormat(McpClient.CLAUDE_DESKTOP, claude_desktop.FILE, claude_desktop.render),
        ClientFormat(McpClient.VSCODE, vscode.FILE, vscode.render),
        ClientFormat(McpClient.CURSOR, cursor.FILE, cursor.render),
        ClientFormat(McpClient.GEMINI_CLI, gemini.FILE, gemini.render),
    )
}


def client_path(client: McpClient, agent_id: str) -> str:
    """Where ``client``'s file for ``agent_id`` goes, relative to the out dir."""
    return f"clients/{client.value}/{agent_id}/{CLIENTS[client].file}"


def render_client_configs(
    agent_id: str,
    servers: Sequence[McpServer],
    *,
    hosted_urls: Mapping[str, str],
    base_dirs: Mapping[str, Path],
    discovered_tools: Mapping[str, Sequence[str]] | None = None,
    tokens: Mapping[str, str] | None = None,
    auth: AuthFor | None = None,
) -> tuple[dict[str, str], list[Diagnostic]]:
    """Every client file of ``agent_id`` (by path under the out dir), and what could not be expressed.

    Hosted servers are authenticated with ``auth(consumer, servers)`` when given (the token
    store's view: a header per server the consumer's token reaches), else with the consumer's
    entry in ``tokens`` (``hosted_auth_header``).
    """
    files: dict[str, str] = {}
    diagnostics: list[Diagnostic] = []
    for client, fmt in CLIENTS.items():
        if not any(projected(s, agent_id, client) for s in servers):
            continue
        consumer = consumer_id(client, agent_id)
        reached = hosted_servers(servers, agent_id, client, hosted_urls)
        if auth is not None:
            headers = dict(auth(consumer, reached))
        else:
            header = hosted_auth_header(consumer, tokens)
            headers = {s.name: header for s in reached} if header else {}
        ctx = ClientContext(client, agent_id, hosted_urls, base_dirs, discovered_tools, headers)
        doc = fmt.render(servers, ctx)
        diagnostics.extend(ctx.diagnostics)
        files[client_path(client, agent_id)] = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return files, diagnostics


__all__ = [
    "CLIENTS",
    "AuthFor",
    "ClientFormat",
    "client_path",
    "consumer_id",
    "hosted_auth_header",
    "render_client_configs",
]
