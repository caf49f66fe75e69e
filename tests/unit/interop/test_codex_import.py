"""Codex config.toml → McpServer resources: the inverse of clawplane's Codex projection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawplane.interop.sources import import_file
from clawplane.models import McpServer
from clawplane.render import render_codex_config

API = "clawplane.dev/v1alpha1"
SPECS: dict[str, dict[str, Any]] = {
    "local": {"transport": "stdio", "hosting": "consumer", "command": "srv", "args": ["--x"],
              "env": {"MODE": "fast", "API_TOKEN": {"valueFrom": {"env": "API_TOKEN"}}},
              "toolFilter": {"include": ["read"], "exclude": ["drop"]}, "requestTimeoutMs": 2500,
              "connectionTimeoutMs": 4000, "supportsParallelToolCalls": True,
              "codex": {"defaultToolsApprovalMode": "prompt"}},
    "remote": {"transport": "streamable-http", "url": "https://mcp.example.com/mcp",
               "headers": {"Authorization": {"valueFrom": {"env": "REMOTE_AUTH"}}, "X-Team": "blue"},
               "enabled": False},
}


def test_render_then_import_gives_the_same_servers(tmp_path: Path) -> None:
    servers = [McpServer.model_validate({"apiVersion": API, "kind": "McpServer", "metadata": {"name": n}, "spec": s})
               for n, s in SPECS.items()]
    rendered = render_codex_config("main", servers, hosted_urls={}, base_dirs={})
    assert rendered.diagnostics == []
    source = tmp_path / "config.toml"
    source.write_text(rendered.text)
    result = import_file(source)
    assert result.format == "codex" and result.complete, [d.message for d in result.lost]
    got = {d["metadata"]["name"]: d["spec"] for d in result.documents["McpServer"]}
    expected = {n: dict(s) for n, s in SPECS.items()}
    # The disabled server's headers are not projected (Codex gets no secrets for an off server).
    expected["remote"] = {k: v for k, v in expected["remote"].items() if k != "headers"}
    assert got == expected


def test_unmapped_codex_settings_are_losses_with_lines(tmp_path: Path) -> None:
    source = tmp_path / "config.toml"
    source.write_text('model = "o3"\n\n[mcp_servers.gh]\nurl = "https://api.example.com/mcp"\n'
                      'bearer_token_env_var = "GH_TOKEN"\noauth_resource = "x"\n\n[mcp_servers.bad]\nargs = []\n')
    result = import_file(source)
    assert [d["metadata"]["name"] for d in result.documents["McpServer"]] == ["gh"]
    lost = {d.path: d.location.line if d.location else 0 for d in result.lost}
    assert lost == {"mcp_servers.gh.bearer_token_env_var": 5, "mcp_servers.gh.oauth_resource": 6, "mcp_servers.bad": 8}
