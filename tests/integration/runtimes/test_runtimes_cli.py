"""``clawplane mcp probe`` and ``clawplane bridge`` run as real commands."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from tests.fixtures.servers.helpers import CLAWPLANE, bridge_process, live, script


def write_servers(folder: Path, servers: dict[str, dict[str, Any]]) -> Path:
    docs = []
    for name, spec in servers.items():
        doc = {
            "apiVersion": "clawplane.dev/v1alpha1",
            "kind": "McpServer",
            "metadata": {"name": name},
            "spec": spec,
        }
        docs.append(json.dumps(doc))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "servers.yaml").write_text("\n---\n".join(docs) + "\n", encoding="utf-8")
    return folder


def fixture(name: str, *args: str, **spec: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [script(name), *args], **spec}


def probe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLAWPLANE, "mcp", "probe", *args], capture_output=True, text=True, timeout=120)


def test_probe_json_reports_names_counts_and_capabilities(tmp_path: Path) -> None:
    folder = write_servers(
        tmp_path / "decl",
        {
            "My.Server": fixture("awkward_names", toolFilter={"exclude": ["secret_*"]}),
            "normal": fixture("normal", requestTimeoutMs=30000),
            "off": {**fixture("normal"), "enabled": False},
        },
    )
    proc = probe(str(folder), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)

    assert list(doc) == ["generatedAt", "servers", "tools", "diagnostics"]
    assert sorted(doc["servers"]) == ["My.Server", "normal"] and doc["diagnostics"] == []
    awkward, normal = doc["servers"]["My.Server"], doc["servers"]["normal"]
    assert (awkward["tools"], awkward["filteredTools"]) == (9, 5)
    assert normal["requestTimeoutMs"] == 30000 and normal["resources"] and normal["prompts"]
    assert doc["tools"] == sorted(doc["tools"])
    assert "My-Server__Read_File-2" in doc["tools"] and "My-Server__read_file" in doc["tools"]
    assert "normal__resources_read" in doc["tools"]
    assert 'info: tool "list.dir" from server "My.Server" registered as "My-Server__list-dir"' in proc.stderr


def test_probe_one_name_in_text_form(tmp_path: Path) -> None:
    folder = write_servers(
        tmp_path / "decl", {"first": fixture("awkward_names"), "normal": fixture("normal")}
    )
    proc = probe(str(folder), "normal")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"MCP probe ({folder}):"
    assert lines[1] == "- normal: 9 tools, resources, prompts, Codex approval auto"
    assert "    normal__echo" in lines and not any("first" in line for line in lines)


def test_probe_reports_a_failing_server_and_exits_1(tmp_path: Path) -> None:
    folder = write_servers(
        tmp_path / "decl",
        {"hang": fixture("hanging", connectionTimeoutMs=1000), "normal": fixture("normal")},
    )
    proc = probe(str(folder), "--json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert list(doc["servers"]) == ["normal"]
    assert doc["diagnostics"] == [
        {
            "serverName": "hang",
            "safeServerName": "hang",
            "launchSummary": f"{sys.executable} {script('hanging')}",
            "message": 'MCP server "hang" timed out: did not complete initialize within 1s',
            "stderr": ["hanging on server/discover"],  # what the server said, beyond OpenClaw's shape
        }
    ]
    assert f'MCP probe failed for "hang" in {folder}: MCP server "hang" timed out' in proc.stderr
    shown = probe(str(folder))
    assert "! hang: MCP server \"hang\" timed out" in shown.stdout
    assert "    stderr: hanging on server/discover" in shown.stdout


def test_probe_refuses_unknown_names_and_invalid_folders(tmp_path: Path) -> None:
    folder = write_servers(tmp_path / "decl", {"normal": fixture("normal")})
    unknown = probe(str(folder), "nope")
    assert unknown.returncode == 1 and f'No MCP server named "nope" in {folder}.' in unknown.stderr
    broken = write_servers(tmp_path / "broken", {"bad": {"command": sys.executable, "bogus": 1}})
    invalid = probe(str(broken))
    assert invalid.returncode == 1 and "does not validate" in invalid.stderr


def text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.anyio
async def test_bridge_serves_its_child_and_shuts_down_cleanly_on_sigterm() -> None:
    async with bridge_process(sys.executable, script("grandchild")) as (process, url):
        async with Client(url, read_timeout_seconds=30) as client:
            tools = await client.list_tools()
            echo = text(await client.call_tool("echo", {"message": "via cli"}))
            grandchild = int(text(await client.call_tool("grandchild_pid", {})))
            server = int(text(await client.call_tool("pid", {})))
        async with httpx.AsyncClient() as http:
            health = await http.get(url.replace("/mcp", "/healthz"))
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(30):
            code = await process.wait()
    assert "echo" in {t.name for t in tools.tools} and echo == "echo: via cli"
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert code == 0
    assert live([server, grandchild]) == []


@pytest.mark.anyio
async def test_bridge_exits_with_the_child_exit_code() -> None:
    async with bridge_process(sys.executable, script("crashing")) as (process, url):
        async with Client(url, read_timeout_seconds=30) as client:
            with pytest.raises(MCPError):  # the child dies mid-call
                await client.call_tool("crash", {"code": 7})
        with anyio.fail_after(30):
            code = await process.wait()
    assert code == 7


def test_bridge_without_a_command_is_a_usage_error() -> None:
    proc = subprocess.run([*CLAWPLANE, "bridge"], capture_output=True, text=True, timeout=60, env=os.environ)
    assert proc.returncode == 2
