"""Real consumers through the authenticated hosted endpoint, with the configs clawplane rendered.

OpenClaw 2026.9.6 (``openclaw mcp probe --json``) reads the rendered openclaw.json, whose hosted
entries carry the gateway's bearer token; the Codex 0.171 app-server reads the rendered
``codex/coder/config.toml`` (``http_headers`` with the coder projection's token) and calls a tool
with ``mcpServer/tool/call``; ``codex mcp list --json`` shows that header, and the new one after
a rotation. Both are then refused once their token is rotated away.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.integration.engine.conftest import ROOT, Cli, processes_under
from tests.oracles.runners import CodexOracle, OpenClawOracle

pytestmark = pytest.mark.compat


@pytest.fixture
def applied(tmp_path: Path) -> Iterator[tuple[Path, Cli]]:
    folder = tmp_path / "quickstart"
    shutil.copytree(ROOT / "examples" / "quickstart", folder, ignore=shutil.ignore_patterns(".clawplane"))
    cli = Cli(folder)
    with fake_quickstart_provider(folder) as fake:
        cli.env[KEY_ENV] = fake.key or ""
        result = cli("apply", str(folder), "--yes")
        assert result.returncode == 0, result.stdout + result.stderr
        yield folder, cli
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()


def test_openclaw_probes_the_hosted_server_with_its_token(
    applied: tuple[Path, Cli], openclaw: OpenClawOracle
) -> None:
    folder, cli = applied
    openclaw.use_config(folder / ".clawplane" / "out" / "openclaw.json")
    probe = openclaw.json("mcp", "probe", "notes", "--json", timeout=180)
    assert probe["diagnostics"] == [], probe
    # The four tools plus OpenClaw's own resources/prompts helpers; debug_dump stays filtered.
    assert sorted(probe["tools"]) == [
        "notes__add_note", "notes__greet", "notes__list_notes", "notes__prompts_get", "notes__prompts_list",
        "notes__read_note", "notes__resources_list", "notes__resources_read",
    ]  # fmt: skip
    rotated = cli("token", "rotate", str(folder), "openclaw")
    assert rotated.returncode == 0, rotated.stdout
    fresh = openclaw.json("mcp", "probe", "notes", "--json", timeout=180)
    assert fresh["diagnostics"] == [] and "notes__greet" in fresh["tools"]


def test_openclaw_with_a_stale_token_is_refused(applied: tuple[Path, Cli], openclaw: OpenClawOracle) -> None:
    folder, cli = applied
    stale = json.loads((folder / ".clawplane" / "out" / "openclaw.json").read_text())
    assert cli("token", "rotate", str(folder), "openclaw").returncode == 0
    openclaw.write_config(stale)
    probe = openclaw.run("mcp", "probe", "notes", "--json", timeout=180)
    doc = json.loads(probe.stdout)
    # OpenClaw redacts the response body; the refusal shows as a failed POST and no tools.
    assert doc["tools"] == [] and doc["servers"] == {}
    assert [d["serverName"] for d in doc["diagnostics"]] == ["notes"]
    assert "Error POSTing to endpoint" in doc["diagnostics"][0]["message"]


def _app_server(codex: CodexOracle, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run ``codex app-server``, start an ephemeral thread, make ``calls``; their results."""
    return app_server_requests(codex, [("mcpServer/tool/call", call) for call in calls])


def app_server_requests(codex: CodexOracle, requests: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Run ``codex app-server``, start an ephemeral thread, send ``(method, params)`` requests (each
    with the thread's ``threadId``); their answers."""
    proc = subprocess.Popen(
        [*codex.argv, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, env=codex.env, cwd=codex.cwd,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def answer(request_id: int) -> dict[str, Any]:
        deadline = time.monotonic() + 120
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message
        raise AssertionError(f"codex app-server gave no answer to request {request_id}")

    try:
        send(
            {
                "id": 0,
                "method": "initialize",
                "params": {"clientInfo": {"name": "clawplane-test", "version": "0"}},
            }
        )
        answer(0)
        send({"method": "initialized"})
        send({"id": 1, "method": "thread/start", "params": {"ephemeral": True}})
        thread = answer(1)["result"]["thread"]["id"]
        results = []
        for n, (method, params) in enumerate(requests, start=2):
            send({"id": n, "method": method, "params": {"threadId": thread, **params}})
            results.append(answer(n))
        return results
    finally:
        proc.kill()
        proc.wait(timeout=30)


def _codex_transport(codex: CodexOracle, server: str) -> dict[str, Any]:
    proc = codex.run("mcp", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = {entry["name"]: entry for entry in json.loads(proc.stdout)}
    assert listed[server]["auth_status"] == "bearer_token", listed[server]
    return dict(listed[server]["transport"])


def test_codex_mcp_list_reads_the_projection_token_and_the_rotated_one(
    applied: tuple[Path, Cli], codex: CodexOracle
) -> None:
    folder, cli = applied
    rendered = folder / ".clawplane" / "out" / "codex" / "coder" / "config.toml"
    token = cli("token", "show", str(folder), "codex:coder").stdout.strip()
    codex.write_config(rendered.read_text())
    transport = _codex_transport(codex, "notes")
    assert transport["type"] == "streamable_http" and transport["url"].endswith("/mcp/notes")
    assert transport["http_headers"] == {"Authorization": f"Bearer {token}"}

    assert cli("token", "rotate", str(folder), "codex:coder").returncode == 0
    rotated = cli("token", "show", str(folder), "codex:coder").stdout.strip()
    assert rotated != token
    codex.write_config(rendered.read_text())
    assert _codex_transport(codex, "notes")["http_headers"] == {"Authorization": f"Bearer {rotated}"}


def test_codex_app_server_calls_a_tool_with_its_projection_token(
    applied: tuple[Path, Cli], codex: CodexOracle
) -> None:
    folder, cli = applied
    config = (folder / ".clawplane" / "out" / "codex" / "coder" / "config.toml").read_text()
    assert "[mcp_servers.notes.http_headers]" in config
    codex.write_config(config)
    [greeted] = _app_server(codex, [{"server": "notes", "tool": "greet", "arguments": {"name": "codex"}}])
    assert greeted["result"]["content"][0]["text"] == "hello from clawplane, codex!", greeted
    assert greeted["result"]["isError"] is False

    assert cli("token", "rotate", str(folder), "codex:coder").returncode == 0
    [refused] = _app_server(codex, [{"server": "notes", "tool": "greet", "arguments": {"name": "again"}}])
    assert "result" not in refused or refused["result"].get("isError"), refused
