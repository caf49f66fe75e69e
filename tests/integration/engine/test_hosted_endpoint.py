"""The supervisor's hosted endpoint: per-consumer tokens in the rendered configs, rotation, a stable port."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.integration.engine.conftest import ROOT, Cli
from tests.support.quickstart import copy_quickstart

VAULT = """
---
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: vault
spec:
  transport: stdio
  command: python3
  args: [servers/notes_server.py]
  cwd: .
  env:
    NOTES_API_TOKEN: {valueFrom: {env: NOTES_API_TOKEN}}
  codex:
    agents: [writer]
"""
PING = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
ACCEPT = {"Accept": "application/json, text/event-stream"}


def _out(folder: Path) -> Path:
    return folder / ".clawplane" / "out"


def _openclaw(folder: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((_out(folder) / "openclaw.json").read_text())
    return doc


def _codex(folder: Path, agent: str) -> dict[str, Any]:
    return tomllib.loads((_out(folder) / "codex" / agent / "config.toml").read_text())


def _status(url: str, authorization: str | None) -> int:
    async def go() -> int:
        headers = {**ACCEPT, **({"Authorization": authorization} if authorization else {})}
        async with httpx.AsyncClient(timeout=60) as http:
            response = await http.post(url, json=PING, headers=headers)
            if response.status_code == 200 and "mcp-session-id" in response.headers:
                await http.delete(url, headers={**headers, "Mcp-Session-Id": response.headers["mcp-session-id"]})
            return response.status_code

    return anyio.run(go)


@pytest.fixture
def two_servers(quickstart: tuple[Path, Cli]) -> tuple[Path, Cli]:
    folder, cli = quickstart
    with (folder / "mcp-servers.yaml").open("a") as f:
        f.write(VAULT)
    applied = cli("apply", str(folder), "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    return folder, cli


def test_each_consumer_gets_its_own_token_reaching_only_its_servers(two_servers: tuple[Path, Cli]) -> None:
    folder, cli = two_servers
    servers = _openclaw(folder)["mcp"]["servers"]
    gateway = servers["notes"]["headers"]["Authorization"]
    assert servers["vault"]["headers"]["Authorization"] == gateway
    coder = _codex(folder, "coder")["mcp_servers"]
    assert set(coder) == {"notes"}
    coder_auth = coder["notes"]["http_headers"]["Authorization"]
    assert coder_auth.startswith("Bearer clawplane_") and coder_auth != gateway
    notes, vault = servers["notes"]["url"], servers["vault"]["url"]

    assert _status(notes, gateway) == 200 and _status(vault, gateway) == 200
    assert _status(notes, coder_auth) == 200
    assert _status(vault, coder_auth) == 403  # vault is not in coder's Codex config
    assert _status(notes, None) == 401
    assert _status(notes, "Bearer clawplane_not-a-real-token") == 401

    listed = cli.json("token", "list", str(folder), "--json")
    reach = {row["consumer"]: row["servers"] for row in listed}
    assert reach["openclaw"] == ["notes", "vault"] and reach["codex:coder"] == ["notes"]
    assert reach["cli"] == []
    shown = cli("token", "show", str(folder), "codex:coder")
    assert shown.stdout.strip() == coder_auth.removeprefix("Bearer ")


def test_rotation_refuses_the_old_token_and_rewrites_the_configs(two_servers: tuple[Path, Cli]) -> None:
    folder, cli = two_servers
    old = _openclaw(folder)["mcp"]["servers"]["notes"]["headers"]["Authorization"]
    coder_before = _codex(folder, "coder")["mcp_servers"]["notes"]["http_headers"]["Authorization"]
    rotated = cli("token", "rotate", str(folder), "openclaw")
    assert rotated.returncode == 0, rotated.stdout + rotated.stderr
    assert "rotated openclaw" in rotated.stdout and "wrote openclaw.json" in rotated.stdout
    entry = _openclaw(folder)["mcp"]["servers"]["notes"]
    new = entry["headers"]["Authorization"]
    assert new != old
    assert _status(entry["url"], old) == 401
    assert _status(entry["url"], new) == 200
    assert _codex(folder, "coder")["mcp_servers"]["notes"]["http_headers"]["Authorization"] == coder_before
    assert old.removeprefix("Bearer ") not in rotated.stdout + rotated.stderr
    plan = cli("plan", str(folder), "--detailed-exitcode")
    assert plan.returncode == 0, plan.stdout


def test_the_port_and_the_rendered_files_survive_a_supervisor_restart(quickstart: tuple[Path, Cli]) -> None:
    folder, cli = quickstart
    assert cli("apply", str(folder), "--yes").returncode == 0
    before = (_out(folder) / "openclaw.json").read_bytes()
    assert cli("down", str(folder)).returncode == 0
    again = cli("apply", str(folder), "--yes")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (_out(folder) / "openclaw.json").read_bytes() == before
    assert cli("plan", str(folder), "--detailed-exitcode").returncode == 0


def test_a_taken_port_moves_the_endpoint_and_says_so(quickstart: tuple[Path, Cli]) -> None:
    folder, cli = quickstart
    assert cli("apply", str(folder), "--yes").returncode == 0
    port = int(_openclaw(folder)["mcp"]["servers"]["notes"]["url"].split(":")[2].split("/")[0])
    assert cli("down", str(folder)).returncode == 0
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        again = cli("apply", str(folder), "--yes")
        assert again.returncode == 0, again.stdout + again.stderr
        moved = int(_openclaw(folder)["mcp"]["servers"]["notes"]["url"].split(":")[2].split("/")[0])
    assert moved != port
    log = (folder / ".clawplane" / "supervisor.log").read_text()
    assert f"port {port}, used by this folder last time, is taken" in log


def test_the_gateway_endpoint_is_honoured(quickstart: tuple[Path, Cli]) -> None:
    folder, cli = quickstart
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    gateway = (folder / "gateway.yaml").read_text()
    assert "endpoint:" not in gateway
    (folder / "gateway.yaml").write_text(gateway.rstrip() + f"\n  endpoint:\n    port: {port}\n")
    applied = cli("apply", str(folder), "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert _openclaw(folder)["mcp"]["servers"]["notes"]["url"] == f"http://127.0.0.1:{port}/mcp/notes"


@pytest.fixture
def open_folder(tmp_path: Path) -> Iterator[tuple[Path, Cli]]:
    """The quickstart in a folder every user may traverse (pytest's own tmp dirs are 0700)."""
    base = Path(tempfile.mkdtemp(prefix="clawplane-shared-"))
    base.chmod(0o755)
    folder = base / "quickstart"
    copy_quickstart(folder)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    cli = Cli(folder)
    try:
        with fake_quickstart_provider(folder) as fake:
            cli.env[KEY_ENV] = fake.key or ""
            yield folder, cli
    finally:
        cli("down", str(folder))
        shutil.rmtree(base, ignore_errors=True)


def test_another_local_user_can_neither_read_the_tokens_nor_call_a_tool(open_folder: tuple[Path, Cli]) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to run a probe as another user")
    folder, cli = open_folder
    applied = cli("apply", str(folder), "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    url = _openclaw(folder)["mcp"]["servers"]["notes"]["url"]
    probe = (
        "import json, pathlib, sys, urllib.request, urllib.error\n"
        f"PING = {PING!r}\n"
        "state = pathlib.Path(sys.argv[1])\n"
        "read = []\n"
        "for path in [state / 'state.db', state / 'out' / 'openclaw.json']:\n"
        "    try:\n"
        "        path.read_bytes(); read.append(str(path))\n"
        "    except OSError:\n"
        "        pass\n"
        "request = urllib.request.Request(sys.argv[2], data=json.dumps(PING).encode(), method='POST',\n"
        "    headers={'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream'})\n"
        "try:\n"
        "    code = urllib.request.urlopen(request, timeout=30).status\n"
        "except urllib.error.HTTPError as exc:\n"
        "    code = exc.code\n"
        "print(json.dumps({'read': read, 'status': code}))\n"
    )
    result = subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable, "-c", probe,
         str(folder / ".clawplane"), url],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen == {"read": [], "status": 401}


def test_a_change_to_what_a_fresh_session_sees_is_drift_in_plan(tmp_path: Path) -> None:
    folder = tmp_path / "drift"
    folder.mkdir()
    server = ROOT / "tests" / "fixtures" / "servers" / "changing_server.py"
    (folder / "server.yaml").write_text(
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata: {name: changing}\n"
        f"spec: {{command: {sys.executable}, args: [{server}]}}\n"
    )
    cli = Cli(folder)
    try:
        assert cli("apply", str(folder), "--yes").returncode == 0
        assert cli("plan", str(folder), "--detailed-exitcode").returncode == 0
        entry = _openclaw(folder)["mcp"]["servers"]["changing"]

        async def add_tool() -> None:
            http = httpx2.AsyncClient(headers={"Authorization": entry["headers"]["Authorization"]}, timeout=60)
            # 2026-07-28 has no sessions: the call reaches the primary process, which every fresh
            # session of this server shares, so its tool surface really changes.
            async with Client(streamable_http_client(entry["url"], http_client=http), mode="auto") as client:
                assert client.protocol_version == "2026-07-28"
                await client.call_tool("add_tool", {"name": "appeared"})

        anyio.run(add_tool)
        deadline = time.monotonic() + 60
        while True:
            plan = cli("plan", str(folder), "--detailed-exitcode")
            if plan.returncode == 2 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert plan.returncode == 2, plan.stdout
        assert "tools drifted upstream (+appeared)" in plan.stdout
    finally:
        cli("down", str(folder))
