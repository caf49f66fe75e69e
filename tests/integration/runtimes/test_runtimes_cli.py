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
from mcp.shared.exceptions import MCPError
from tests.fixtures.servers.helpers import CLAWPLANE, START_TIMEOUT, authed, bridge_process, live, script


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
    # A start may take far longer than the 5 s default on a loaded machine; tests of timeouts set theirs.
    spec.setdefault("connectionTimeoutMs", int(START_TIMEOUT * 1000))
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
        # 5 s: the fixture must get as far as saying why it hangs (past its SDK import) on a busy machine.
        {"hang": fixture("hanging", connectionTimeoutMs=5000), "normal": fixture("normal")},
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
            "message": 'MCP server "hang" timed out: did not complete initialize within 5s',
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
        async with authed(url, mode="legacy") as client:
            tools = await client.list_tools()
            echo = text(await client.call_tool("echo", {"message": "via cli"}))
            grandchild = int(text(await client.call_tool("grandchild_pid", {})))
            server = int(text(await client.call_tool("pid", {})))
        async with httpx.AsyncClient() as http:
            health = await http.get(url.replace("/mcp", "/healthz"))
            refused = await http.post(url, json={})
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(30):
            code = await process.wait()
    assert "echo" in {t.name for t in tools.tools} and echo == "echo: via cli"
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert refused.status_code == 401
    assert code == 0
    assert live([server, grandchild]) == []


@pytest.mark.anyio
async def test_bridge_exits_with_the_child_exit_code() -> None:
    async with bridge_process(sys.executable, script("crashing")) as (process, url):
        # A 2026-07-28 client talks to the primary process, whose exit ends the bridge.
        async with authed(url, mode="auto") as client:
            with pytest.raises(MCPError):  # the child dies mid-call
                await client.call_tool("crash", {"code": 7})
        with anyio.fail_after(30):
            code = await process.wait()
    assert code == 7


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_bridge_hides_and_refuses_what_its_tool_filter_filters(mode: str) -> None:
    # Kubernetes bridge pods get the McpServer's toolFilter this way: hidden there too.
    hidden = json.dumps({"exclude": ["slow", "env"]})
    async with (
        bridge_process(sys.executable, script("normal"), args=["--tool-filter", hidden]) as (_, url),
        authed(url, mode=mode) as client,
    ):
        names = {t.name for t in (await client.list_tools()).tools}
        with pytest.raises(MCPError, match="Unknown tool: env"):
            await client.call_tool("env", {"name": "PATH"})
        echo = text(await client.call_tool("echo", {"message": "shown"}))
    assert "echo" in names and not names & {"slow", "env"}
    assert echo == "echo: shown"


def test_bridge_refuses_a_malformed_tool_filter() -> None:
    proc = _bridge("--port", "0", "--tool-filter", '{"include": []}', "--", "true",
                   env={"CLAWPLANE_BRIDGE_TOKEN": "t" * 43})  # fmt: skip
    assert proc.returncode == 2
    assert "--tool-filter is not a toolFilter object: include:" in proc.stderr


def test_bridge_without_a_command_is_a_usage_error() -> None:
    proc = subprocess.run([*CLAWPLANE, "bridge"], capture_output=True, text=True, timeout=60, env=os.environ)
    assert proc.returncode == 2


def _bridge(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "CLAWPLANE_BRIDGE_TOKEN"}
    environ.update(env or {})
    return subprocess.run(
        [*CLAWPLANE, "bridge", *args], capture_output=True, text=True, timeout=120, env=environ
    )


def test_bridge_refuses_to_start_without_a_token() -> None:
    proc = _bridge("--port", "0", "--", sys.executable, script("normal"))
    assert proc.returncode == 2
    assert "no token: give --token-file PATH (or set CLAWPLANE_BRIDGE_TOKEN)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bridge_refuses_unauthenticated_on_a_non_loopback_address() -> None:
    proc = _bridge("--host", "0.0.0.0", "--allow-unauthenticated", "--", sys.executable, script("normal"))
    assert proc.returncode == 2
    assert "--allow-unauthenticated is refused on 0.0.0.0" in proc.stderr and "--token-file" in proc.stderr


def test_bridge_token_file_must_hold_one_token(tmp_path: Path) -> None:
    bad = tmp_path / "token"
    bad.write_text("two\nlines\n")
    proc = _bridge("--token-file", str(bad), "--", sys.executable, script("normal"))
    assert proc.returncode == 2 and "must hold one token" in proc.stderr
    missing = _bridge("--token-file", str(tmp_path / "nope"), "--", sys.executable, script("normal"))
    assert missing.returncode == 2 and "cannot read --token-file" in missing.stderr


def test_bridge_on_a_busy_port_names_the_port() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = _bridge("--port", str(port), "--", sys.executable, script("normal"), env={"CLAWPLANE_BRIDGE_TOKEN": "t"})
    assert proc.returncode == 1
    assert f"port {port} on 127.0.0.1 is already in use" in proc.stderr and "--port" in proc.stderr
    assert "ExceptionGroup" not in proc.stderr and "internal error" not in proc.stderr


def test_bridge_with_a_missing_command_says_why_and_exits_127() -> None:
    proc = _bridge("--port", "0", "--", "/nonexistent/server", env={"CLAWPLANE_BRIDGE_TOKEN": "t"})
    assert proc.returncode == 127
    assert "could not start" in proc.stderr and "/nonexistent/server" in proc.stderr
    assert "No such file or directory" in proc.stderr


def test_bridge_shows_the_servers_own_stderr_when_it_fails_to_start(tmp_path: Path) -> None:
    failing = tmp_path / "failing.py"
    failing.write_text("import sys\nprint('NOTES_API_TOKEN is not set', file=sys.stderr)\nsys.exit(3)\n")
    proc = _bridge("--port", "0", "--", sys.executable, str(failing), env={"CLAWPLANE_BRIDGE_TOKEN": "t"})
    assert proc.returncode == 3
    assert "NOTES_API_TOKEN is not set" in proc.stderr and "exited with code 3" in proc.stderr
