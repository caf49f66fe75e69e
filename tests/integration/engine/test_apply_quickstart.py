"""The quickstart converges for real, serves its hosted server, and leaves nothing behind."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.integration.engine.conftest import CANARY, PROVIDER_CANARY, Cli, processes_under


def _all_text(folder: Path) -> str:
    state = folder / ".clawplane"
    chunks = []
    for path in state.rglob("*"):
        if path.is_file() and path.suffix not in (".db", ".db-wal", ".db-shm", ".sock"):
            chunks.append(path.read_text(errors="replace"))
    conn = sqlite3.connect(state / "state.db")
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
        chunks.extend(repr(row) for row in conn.execute(f"SELECT * FROM {table}"))
    conn.close()
    return "\n".join(chunks)


def test_quickstart_converges_serves_and_tears_down(quickstart: tuple[Path, Cli]) -> None:
    folder, cli = quickstart
    applied = cli("apply", str(folder), "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "Apply complete: 8 succeeded, 0 failed" in applied.stdout

    status = cli.json("status", str(folder), "--json")
    by_key = {r["key"]: r for r in status["resources"]}
    notes = by_key["McpServer/notes"]
    assert notes["phase"] == "Ready" and notes["toolCount"] == 4
    assert sorted(notes["tools"]) == [
        "notes__add_note",
        "notes__greet",
        "notes__list_notes",
        "notes__read_note",
    ]
    assert {c["type"] for c in notes["conditions"]} == {
        "Accepted",
        "ResolvedRefs",
        "Programmed",
        "ToolsDiscovered",
        "Ready",
    }
    assert by_key["McpServer/docs-search"]["phase"] == "Disabled"
    local = by_key["ModelProvider/local"]
    assert local["phase"] == "Ready"
    assert local["models"] == ["llama-3.1-8b-instruct", "qwen2.5-coder-32b-instruct"]
    ready = {c["type"]: c for c in local["conditions"]}
    assert ready["ModelsDiscovered"]["status"] == "True" and ready["Ready"]["reason"] == "Ready"
    assert "warnings" not in by_key["Agent/writer"]
    assert by_key["Agent/coder"]["skills"] == 2 and by_key["Agent/coder"]["promptChars"] > 370
    assert status["supervisor"]["running"] is True

    out = folder / ".clawplane" / "out"
    for rel in (
        "openclaw.json",
        "agents/coder/skills-prompt.txt",
        "agents/coder/snapshot.json",
        "agents/coder/tools.json",
        "agents/writer/snapshot.json",
        "codex/coder/config.toml",
    ):
        assert (out / rel).is_file(), rel
    assert "<name>git-helper</name>" in (out / "agents/coder/skills-prompt.txt").read_text()

    again = cli("plan", str(folder), "--detailed-exitcode")
    assert again.returncode == 0, again.stdout

    entry = json.loads((out / "openclaw.json").read_text())["mcp"]["servers"]["notes"]
    url, authorization = entry["url"], entry["headers"]["Authorization"]
    # Both agents get Claude Code, VS Code, Cursor and Gemini CLI configs pointing at the hosted
    # endpoint, each with a token of its own (consumer client:<client>:<agent>).
    seen = {authorization}
    for agent in ("coder", "writer"):
        claude = json.loads((out / f"clients/claude-code/{agent}/.mcp.json").read_text())["mcpServers"]["notes"]
        vscode = json.loads((out / f"clients/vscode/{agent}/mcp.json").read_text())["servers"]["notes"]
        cursor = json.loads((out / f"clients/cursor/{agent}/mcp.json").read_text())["mcpServers"]["notes"]
        gemini = json.loads((out / f"clients/gemini-cli/{agent}/settings.json").read_text())["mcpServers"]["notes"]
        assert (claude["type"], claude["url"]) == ("http", url)
        assert vscode["url"] == url and cursor["url"] == url
        assert (gemini["httpUrl"], gemini["trust"]) == (url, False)
        for entry_ in (claude, vscode, cursor, gemini):
            header = entry_["headers"]["Authorization"]
            assert header.startswith("Bearer clawplane_") and header not in seen
            seen.add(header)
    assert not (out / "clients/claude-desktop").exists()

    async def call() -> tuple[list[str], str, int]:
        http = httpx2.AsyncClient(headers={"Authorization": authorization}, timeout=60)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("greet", {"name": "ci"})
        async with httpx2.AsyncClient() as anonymous:
            refused = await anonymous.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        return tools, result.content[0].text, refused.status_code  # type: ignore[union-attr]

    tools, text, refused = anyio.run(call)
    assert "debug_dump" not in tools and "greet" in tools
    assert text == "hello from clawplane, ci!"
    assert refused == 401

    rendered = json.loads((out / "openclaw.json").read_text())
    assert rendered["models"]["providers"]["local"]["apiKey"] == {
        "source": "env",
        "provider": "default",
        "id": "LOCAL_LLM_API_KEY",
    }
    assert rendered["session"] == {"dmScope": "per-channel-peer", "reset": {"mode": "idle", "idleMinutes": 240}}
    for secret in (CANARY, PROVIDER_CANARY):
        assert secret not in _all_text(folder)
        assert secret not in applied.stdout + applied.stderr
        assert all(secret not in p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())

    down = cli("down", str(folder))
    assert down.returncode == 0 and "supervisor stopped" in down.stdout
    assert processes_under(folder) == []
