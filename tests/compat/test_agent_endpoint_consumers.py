"""``/mcp/agents/<agent>`` with real third-party consumers and the real OpenClaw as the naming oracle.

One folder hosts four stdio fixture servers whose names and tool filters exercise OpenClaw's
naming (``my.server`` and ``My-Server`` both sanitize to ``my-server``/``My-Server``, tool names
with unsafe characters, a 70-character name, case-insensitive collisions, a leading digit);
agent ``probe`` uses them all. Its endpoint's tools — names and count — equal both
``agents/probe/tools.json`` and the catalog ``openclaw mcp probe --json`` (OpenClaw 2026.9.6)
builds from the same servers. The MCP Inspector CLI 0.15.0 (through the token forwarder: it
cannot send headers) and the Codex 0.171 app-server (``mcp_servers.<x>.http_headers``) list and
call tools through the endpoint.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.compat.test_hosted_consumers import _app_server
from tests.fixtures.servers.helpers import script
from tests.integration.engine.conftest import Cli, processes_under
from tests.oracles.runners import CodexOracle, OpenClawOracle, OracleRunner
from tests.support.forwarder import token_forwarder

pytestmark = pytest.mark.compat

SERVERS: dict[str, dict[str, Any]] = {
    "my.server": {"args": [script("awkward_names")], "toolFilter": {"exclude": ["secret_*"]}},
    "My-Server": {"args": [script("awkward_names")], "toolFilter": {"include": ["*a*"]}},
    "9lives": {"args": [script("normal")]},
    "a.b": {"args": [script("normal")], "toolFilter": {"exclude": ["resources_*", "e*"]}},
}


def _yaml() -> str:
    docs = []
    for name, spec in SERVERS.items():
        body = {"command": sys.executable, "args": spec["args"]}
        if "toolFilter" in spec:
            body["toolFilter"] = spec["toolFilter"]
        docs.append(json.dumps({"apiVersion": "clawplane.dev/v1alpha1", "kind": "McpServer",
                                "metadata": {"name": name}, "spec": body}))  # fmt: skip
    agent = {"apiVersion": "clawplane.dev/v1alpha1", "kind": "Agent", "metadata": {"name": "probe"},
             "spec": {"mcpServers": list(SERVERS)}}  # fmt: skip
    return "\n---\n".join([*docs, json.dumps(agent)]) + "\n"


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Cli, str, str]]:
    """The folder applied; yields it, its CLI, the endpoint's URL and the agent's token."""
    folder = tmp_path_factory.mktemp("agentep-compat") / "folder"
    folder.mkdir()
    (folder / "resources.yaml").write_text(_yaml())
    cli = Cli(folder)
    try:
        done = cli("apply", str(folder), "--yes")
        assert done.returncode == 0, done.stdout + done.stderr
        base = json.loads((folder / ".clawplane" / "supervisor.pid").read_text())["endpoint"]
        token = cli("token", "show", str(folder), "agent:probe").stdout.strip()
        yield folder, cli, f"{base}/mcp/agents/probe", token
    finally:
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()


def _listed(url: str, token: str) -> list[str]:
    """tools/list through the endpoint with plain HTTP (one handshake-era session)."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "Authorization": f"Bearer {token}"}  # fmt: skip
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    with httpx.Client(timeout=120) as http:
        opened = http.post(url, json=init, headers=headers)
        assert opened.status_code == 200, opened.text
        headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        headers["Mcp-Protocol-Version"] = "2025-11-25"
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        answer = http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
        http.delete(url, headers=headers)
    data = next(
        line[5:] for line in answer.text.splitlines() if line.startswith("data:") and line[5:].strip()
    )
    return [tool["name"] for tool in json.loads(data)["result"]["tools"]]


def test_tool_names_equal_tools_json_and_openclaws_probe(
    applied: tuple[Path, Cli, str, str], openclaw: OpenClawOracle
) -> None:
    folder, _, url, token = applied
    openclaw.write_config(
        {"mcp": {"servers": {n: {"command": sys.executable, **s} for n, s in SERVERS.items()}}}
    )
    expected = openclaw.json("mcp", "probe", "--json", timeout=180)
    rows = json.loads((folder / ".clawplane" / "out" / "agents" / "probe" / "tools.json").read_text())
    served = _listed(url, token)

    assert sorted(served) == sorted(expected["tools"]) == sorted(r["name"] for r in rows)
    assert len(served) == len(expected["tools"]) > 30
    assert {"my-server__Read_File-2", "My-Server-2__Read_File-2", "mcp-9lives__echo", "a-b__add"} <= set(
        served
    )


def test_the_inspector_cli_lists_and_calls_through_the_endpoint(
    applied: tuple[Path, Cli, str, str], inspector_cli: OracleRunner
) -> None:
    _, _, url, token = applied
    # The Inspector CLI replaces a path that does not end in /mcp with /mcp: the endpoint's alias.
    with token_forwarder(url + "/mcp", token) as forwarder:
        listed = inspector_cli.json(
            forwarder.url, "--transport", "http", "--method", "tools/list", timeout=120
        )
        called = inspector_cli.json(
            forwarder.url, "--transport", "http", "--method", "tools/call", "--tool-name", "a-b__add",
            "--tool-arg", "a=2", "--tool-arg", "b=40", timeout=120,
        )  # fmt: skip
        resources = inspector_cli.json(
            forwarder.url, "--transport", "http", "--method", "resources/list", timeout=120
        )
    assert {"mcp-9lives__echo", "a-b__add", "my-server__Read_File-2"} <= {t["name"] for t in listed["tools"]}
    assert called["content"][0]["text"] == "42" and called["isError"] is False
    assert [(r["uri"], r["name"]) for r in resources["resources"]] == [
        ("fixture://greeting", "mcp-9lives__greeting")
    ]


def test_the_codex_app_server_lists_and_calls_through_the_endpoint(
    applied: tuple[Path, Cli, str, str], codex: CodexOracle
) -> None:
    _, _, url, token = applied
    codex.write_config(
        f'[mcp_servers.probe]\nurl = "{url}"\n\n[mcp_servers.probe.http_headers]\nAuthorization = "Bearer {token}"\n'
    )
    listed = codex.run("mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [entry] = [e for e in json.loads(listed.stdout) if e["name"] == "probe"]
    assert entry["auth_status"] == "bearer_token"
    added, echoed = _app_server(
        codex,
        [
            {"server": "probe", "tool": "a-b__add", "arguments": {"a": 2, "b": 40}},
            {"server": "probe", "tool": "mcp-9lives__echo", "arguments": {"message": "codex"}},
        ],
    )
    assert added["result"]["content"][0]["text"] == "42", added
    assert echoed["result"]["content"][0]["text"] == "echo: codex", echoed
