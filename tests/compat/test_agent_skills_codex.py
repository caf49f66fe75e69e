"""A real MCP client reads an agent's skills from ``/mcp/agents/<agent>``: the Codex 0.171 app-server.

Codex needs a model to use a skill in a conversation, but its app-server lists an MCP server's
resources (``mcpServerStatus/list``) and reads one (``mcpServer/resource/read``) without a
model: that is what this test drives, with the folder of ``test_conformance_skills`` and the
endpoint configured as ``docs/skills.md`` shows (``[mcp_servers.<x>] url`` + ``http_headers``).
Codex speaks the handshake era (2025-11-25), so it sees the ``skill://`` resources, not the
``skills/list`` extension.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.compat.test_conformance_skills import SKILLS, applied_skills
from tests.compat.test_hosted_consumers import app_server_requests
from tests.oracles.runners import CodexOracle

pytestmark = pytest.mark.compat


@pytest.fixture
def skilled(tmp_path: Path) -> Iterator[tuple[Path, str, str]]:
    """The folder applied; yields it, agent ``skilled``'s endpoint URL and token."""
    folder = tmp_path / "folder"
    with applied_skills(folder) as (url, token):
        yield folder, url, token


def test_codex_lists_and_reads_the_agents_skills(skilled: tuple[Path, str, str], codex: CodexOracle) -> None:
    folder, url, token = skilled
    codex.write_config(
        f'[mcp_servers.skilled]\nurl = "{url}"\n\n[mcp_servers.skilled.http_headers]\nAuthorization = "Bearer {token}"\n'
    )
    snapshot = json.loads((folder / ".clawplane" / "out" / "agents" / "skilled" / "snapshot.json").read_text())
    names = [s["name"] for s in snapshot["skills"] if s["eligible"] and not s["blockedByAgentFilter"]]
    assert names == ["alpha-forms", "brief-notes", "code-review"]
    files = [rel for rel in SKILLS if rel.split("/")[0] in names]
    status, *reads = app_server_requests(
        codex,
        [("mcpServerStatus/list", {})]
        + [("mcpServer/resource/read", {"server": "skilled", "uri": f"skill://{rel}"}) for rel in files],
    )
    [server] = [s for s in status["result"]["data"] if s["name"] == "skilled"]
    assert [r["uri"] for r in server["resources"]] == [f"skill://{n}/SKILL.md" for n in names]
    assert [r["name"] for r in server["resources"]] == names
    for rel, read in zip(files, reads, strict=True):
        [contents] = read["result"]["contents"]
        data = (folder / "skills" / rel).read_bytes()
        assert contents["uri"] == f"skill://{rel}" and contents["text"].encode() == data
        listed = next((r for r in server["resources"] if r["uri"] == f"skill://{rel}"), None)
        if listed is not None:
            assert listed["size"] == len(data) and listed["mimeType"] == "text/markdown"
