"""Each MCP client's config: rendered by clawplane, imported back, the same McpServer resources.

What a client's file cannot hold is left out of the expectation, and each such loss must be
reported: Claude Desktop holds no remote servers and no references, VS Code turns a file
reference into a prompt that cannot come back, only Gemini CLI keeps tool filters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clawplane.interop.sources import import_file
from clawplane.models import McpServer
from clawplane.models.mcpserver import McpClient
from clawplane.render.clients import CLIENTS, render_client_configs

API = "clawplane.dev/v1alpha1"
FILES = {
    McpClient.CLAUDE_CODE: ".mcp.json",
    McpClient.CLAUDE_DESKTOP: "claude_desktop_config.json",
    McpClient.VSCODE: ".vscode/mcp.json",
    McpClient.CURSOR: ".cursor/mcp.json",
    McpClient.GEMINI_CLI: ".gemini/settings.json",
}
SPECS: dict[str, dict[str, Any]] = {
    "local": {"transport": "stdio", "hosting": "consumer", "command": "python3", "args": ["srv.py", "--v"],
              "env": {"MODE": "fast", "API_TOKEN": {"valueFrom": {"env": "API_TOKEN"}}}},
    "plain": {"transport": "stdio", "hosting": "consumer", "command": "node", "args": ["x.js"]},
    "remote": {"transport": "streamable-http", "url": "https://mcp.example.com/mcp",
               "headers": {"Authorization": {"valueFrom": {"env": "REMOTE_AUTH"}}, "X-Team": "blue"}},
    "events": {"transport": "sse", "url": "https://mcp.example.com/sse"},
}


def _server(name: str, spec: dict[str, Any], client: McpClient) -> McpServer:
    body = {**spec, "clients": {"targets": [client.value]}}
    return McpServer.model_validate({"apiVersion": API, "kind": "McpServer", "metadata": {"name": name}, "spec": body})


def _expected(client: McpClient) -> dict[str, dict[str, Any]]:
    out = {name: json.loads(json.dumps(spec)) for name, spec in SPECS.items()}
    if client is McpClient.CLAUDE_DESKTOP:
        del out["remote"], out["events"]  # stdio only
        del out["local"]["env"]["API_TOKEN"]  # no reference syntax
    if client is McpClient.CURSOR:
        out["events"]["transport"] = "streamable-http"  # Cursor picks the transport itself
    return out


def _round_trip(client: McpClient, tmp_path: Path, specs: dict[str, dict[str, Any]]) -> tuple[Any, list[Any]]:
    servers = [_server(n, s, client) for n, s in specs.items()]
    files, diags = render_client_configs("main", servers, hosted_urls={}, base_dirs={})
    (rendered,) = files.values()
    target = tmp_path / FILES[client]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(rendered)
    return import_file(target), diags


@pytest.mark.parametrize("client", list(CLIENTS), ids=lambda c: c.value)
def test_render_then_import_gives_the_same_servers(client: McpClient, tmp_path: Path) -> None:
    result, diags = _round_trip(client, tmp_path, SPECS)
    assert result.format == client.value
    got = {d["metadata"]["name"]: d["spec"] for d in result.documents["McpServer"]}
    assert got == _expected(client)
    assert result.complete, [d.message for d in result.lost]
    if client is McpClient.CLAUDE_DESKTOP:
        codes = sorted(d.code for d in diags)
        assert codes == ["render.client-remote-unsupported", "render.client-remote-unsupported",
                         "render.client-secret-unrenderable"]
    else:
        assert diags == []


def test_vscode_prompts_for_file_references_and_the_import_reports_them(tmp_path: Path) -> None:
    specs = {"local": {**SPECS["local"], "env": {"KEY": {"valueFrom": {"file": "/run/key"}}}}}
    result, diags = _round_trip(McpClient.VSCODE, tmp_path, specs)
    rendered = json.loads((tmp_path / ".vscode/mcp.json").read_text())
    assert rendered["inputs"] == [{"type": "promptString", "id": "local-env-KEY", "password": True,
                                   "description": "env.KEY of MCP server local"}]
    assert rendered["servers"]["local"]["env"] == {"KEY": "${input:local-env-KEY}"}
    assert diags == []
    assert [d.path for d in result.lost] == ["servers.local.env.KEY"]
    assert result.lost[0].location is not None and result.lost[0].location.line > 0


def test_gemini_keeps_tool_filters_and_trust_false(tmp_path: Path) -> None:
    specs = {"local": {**SPECS["plain"], "toolFilter": {"include": ["read", "list"], "exclude": ["drop"]},
                       "requestTimeoutMs": 5000}}
    result, _ = _round_trip(McpClient.GEMINI_CLI, tmp_path, specs)
    rendered = json.loads((tmp_path / ".gemini/settings.json").read_text())["mcpServers"]["local"]
    assert rendered["trust"] is False and rendered["includeTools"] == ["read", "list"]
    assert {d["metadata"]["name"]: d["spec"] for d in result.documents["McpServer"]} == specs


def test_tool_filters_keep_a_server_out_of_clients_that_cannot_filter(tmp_path: Path) -> None:
    servers = [_server("f", {**SPECS["plain"], "toolFilter": {"exclude": ["secret_*"]}}, McpClient.CURSOR)]
    files, diags = render_client_configs("main", servers, hosted_urls={}, base_dirs={})
    assert json.loads(next(iter(files.values())))["mcpServers"] == {}
    assert [d.code for d in diags] == ["render.client-tool-filter"]


def test_hosted_servers_point_at_the_hosted_endpoint_with_the_consumers_token() -> None:
    servers = [_server("h", {"command": "srv"}, McpClient.CLAUDE_CODE)]
    url = "http://127.0.0.1:4000/mcp/h"
    files, _ = render_client_configs("main", servers, hosted_urls={"h": url}, base_dirs={},
                                     tokens={"client:claude-code:main": "tok-1", "openclaw": "other"})
    entry = json.loads(files["clients/claude-code/main/.mcp.json"])["mcpServers"]["h"]
    assert entry == {"type": "http", "url": url, "headers": {"Authorization": "Bearer tok-1"}}
    untokened, _ = render_client_configs("main", servers, hosted_urls={"h": url}, base_dirs={})
    assert "headers" not in json.loads(untokened["clients/claude-code/main/.mcp.json"])["mcpServers"]["h"]


def test_mixed_references_and_input_prompts_are_losses_never_literals(tmp_path: Path) -> None:
    source = tmp_path / ".mcp.json"
    source.write_text(json.dumps({"mcpServers": {"gh": {
        "type": "http", "url": "https://api.example.com/mcp",
        "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}", "X-Default": "${MODE:-fast}"}}}}, indent=2))
    result = import_file(source)
    assert result.documents["McpServer"][0]["spec"] == {"transport": "streamable-http", "url": "https://api.example.com/mcp"}
    assert sorted(d.path for d in result.lost) == ["mcpServers.gh.headers.Authorization", "mcpServers.gh.headers.X-Default"]
    assert sorted(d.location.line for d in result.lost if d.location) == [7, 8]  # each header on its own line


def test_the_token_store_is_asked_per_consumer_for_the_hosted_servers_it_reaches() -> None:
    servers = [_server("h", {"command": "srv"}, McpClient.GEMINI_CLI), _server("c", SPECS["plain"], McpClient.GEMINI_CLI)]
    asked: list[tuple[str, list[str]]] = []

    def auth(consumer: str, reached: Any) -> dict[str, str]:
        asked.append((consumer, [s.name for s in reached]))
        return {s.name: "Bearer from-store" for s in reached}

    files, _ = render_client_configs("Main", servers, hosted_urls={"h": "http://127.0.0.1:1/mcp/h"}, base_dirs={}, auth=auth)
    assert asked == [("client:gemini-cli:main", ["h"])]  # agent ids are case-insensitive
    entry = json.loads(files["clients/gemini-cli/Main/settings.json"])["mcpServers"]["h"]
    assert entry["headers"] == {"Authorization": "Bearer from-store"}
