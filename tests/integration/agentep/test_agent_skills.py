"""Skills over MCP (SEP-2640) on ``/mcp/agents/<agent>``: the served skills are the agent's snapshot.

A folder of its own (no MCP servers) with the skills of ``tests/compat/test_conformance_skills.py``
plus one whose requirement is missing; agent ``writer`` allows three (one not eligible), agent
``reviewer`` two. Each era (SDK client ``auto`` = 2026-07-28, ``legacy`` = handshake) reads the
listing and every file; a snapshot change and the Gateway switch are applied with the CLI.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter
from tests.compat.test_conformance_skills import write_skills
from tests.fixtures.servers.helpers import START_TIMEOUT
from tests.integration.agentep.conftest import agent_client, notice, running
from tests.integration.engine.conftest import Cli

pytestmark = pytest.mark.anyio
MODES = ("auto", "legacy")
EXTENSION = "io.modelcontextprotocol/skills"
RESOURCES = """apiVersion: clawplane.dev/v1alpha1
kind: Gateway
metadata: {name: default}
spec:
  skills: {load: {extraDirs: [./skills]}}
  endpoint: {skills: true}
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {name: writer}
spec: {skills: [alpha-forms, brief-notes, needs-bin]}
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {name: reviewer}
spec: {skills: [code-review, brief-notes]}
"""
NEEDS = '---\nname: needs-bin\ndescription: N\nmetadata: {"openclaw": {"requires": {"bins": ["no-such-bin-x"]}}}\n---\n'
BIG = 4 * 1024 * 1024 + 1


class _Raw(types.Request[dict[str, Any] | None, str]):
    """A request of a method the SDK has no typed call for (the extension's)."""


async def call(client: Client, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """``method`` with ``params`` on the client's session, the raw result."""
    result: dict[str, Any] = await client.session.send_request(
        _Raw(method=method, params=params or {}), TypeAdapter(dict[str, Any])
    )
    return result


def snapshot_names(folder: Path, agent: str) -> list[str]:
    """The agent's eligible, allowed skills in ``snapshot.json``'s order."""
    snapshot = json.loads((folder / ".clawplane" / "out" / "agents" / agent / "snapshot.json").read_text())
    return [s["name"] for s in snapshot["skills"] if s["eligible"] and not s["blockedByAgentFilter"]]


@pytest.fixture(scope="module")
def skilled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Cli]]:
    """The folder applied (a big file, a hidden one and a symlink out sit in ``alpha-forms``)."""
    root = tmp_path_factory.mktemp("agentskills")
    folder = root / "folder"
    write_skills(folder)
    (folder / "skills" / "needs-bin").mkdir()
    (folder / "skills" / "needs-bin" / "SKILL.md").write_text(NEEDS)
    forms = folder / "skills" / "alpha-forms"
    (forms / ".env").write_text("TOKEN=never-served\n")
    (root / "outside.md").write_text("outside the skill folder\n")
    os.symlink(root / "outside.md", forms / "outside.md")
    with open(forms / "big.bin", "wb") as f:
        f.truncate(BIG)
    (folder / "resources.yaml").write_text(RESOURCES)
    with running(folder) as cli:
        yield folder, cli


@contextlib.asynccontextmanager
async def reapplied(folder: Path, cli: Cli, edits: dict[Path, str]) -> AsyncIterator[None]:
    """``edits`` written and applied; the originals written back and applied afterwards."""
    originals = {path: path.read_text() for path in edits}
    try:
        for path, text in edits.items():
            path.write_text(text)
        done = cli("apply", str(folder), "--yes")
        assert done.returncode == 0, done.stdout + done.stderr
        yield
    finally:
        for path, text in originals.items():
            path.write_text(text)
        assert cli("apply", str(folder), "--yes").returncode == 0


def _bytes(contents: types.TextResourceContents | types.BlobResourceContents) -> bytes:
    if isinstance(contents, types.TextResourceContents):
        return contents.text.encode("utf-8")
    import base64

    return base64.b64decode(contents.blob)


@pytest.mark.parametrize("mode", MODES)
async def test_the_served_skills_are_each_agents_snapshot_names_order_bytes_digests(
    skilled: tuple[Path, Cli], mode: str
) -> None:
    folder, cli = skilled
    assert snapshot_names(folder, "writer") == ["alpha-forms", "brief-notes"]  # needs-bin ineligible
    assert snapshot_names(folder, "reviewer") == ["brief-notes", "code-review"]
    for agent in ("writer", "reviewer"):
        async with agent_client(folder, cli, agent, mode=mode) as client:
            if mode == "auto":  # the handshake era's capabilities have no `extensions` member
                assert client.server_capabilities.extensions == {EXTENSION: {"directoryRead": True}}
            listed = await call(client, "skills/list")
            names = snapshot_names(folder, agent)
            assert [e["uri"] for e in listed["skills"]] == [f"skill://{n}/SKILL.md" for n in names]
            assert [e["frontmatter"]["name"] for e in listed["skills"]] == names
            resources = (await client.list_resources()).resources
            assert [str(r.uri) for r in resources] == [f"skill://{n}/SKILL.md" for n in names]
            for entry, name in zip(listed["skills"], names, strict=True):
                skill_dir = folder / "skills" / name
                on_disk = sorted(
                    p.relative_to(skill_dir).as_posix()
                    for p in skill_dir.rglob("*")
                    if p.is_file() and not p.is_symlink() and not p.name.startswith(".") and p.name != "big.bin"
                )
                served = [r["uri"].removeprefix(f"skill://{name}/") for r in entry["resources"]]
                assert served[0] == "SKILL.md" and sorted(served) == on_disk
                for resource in entry["resources"]:
                    data = (skill_dir / resource["uri"].removeprefix(f"skill://{name}/")).read_bytes()
                    assert resource["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
                    assert resource["size"] == len(data)
                    read = await client.read_resource(resource["uri"])
                    assert _bytes(read.contents[0]) == data
                got = await call(client, "skills/get", {"uri": entry["uri"]})
                assert got["skill"] == entry


@pytest.mark.parametrize("mode", MODES)
async def test_a_snapshot_change_is_announced_and_the_new_list_served(
    skilled: tuple[Path, Cli], mode: str
) -> None:
    folder, cli = skilled
    changed, on_message = notice(types.ResourceListChangedNotification)
    resources = folder / "resources.yaml"
    notes = folder / "skills" / "brief-notes" / "SKILL.md"
    edits = {
        resources: RESOURCES.replace("[code-review, brief-notes]", "[code-review, brief-notes, alpha-forms]"),
        notes: notes.read_text().replace("short ones", "shorter ones"),
    }
    async with agent_client(folder, cli, "reviewer", mode=mode, message_handler=on_message) as client:
        before = await call(client, "skills/list")
        assert [e["frontmatter"]["name"] for e in before["skills"]] == ["brief-notes", "code-review"]
        if mode == "auto":
            async with client.listen(resources_list_changed=True) as subscription, reapplied(folder, cli, edits):
                with anyio.fail_after(START_TIMEOUT):
                    event = await subscription.__anext__()
                assert type(event).__name__ == "ResourcesListChanged"
                after = await call(client, "skills/list")
        else:
            async with reapplied(folder, cli, edits):
                with anyio.fail_after(START_TIMEOUT):
                    await changed.wait()
                after = await call(client, "skills/list")
        names = [e["frontmatter"]["name"] for e in after["skills"]]
        assert names == ["alpha-forms", "brief-notes", "code-review"]
        assert after["skills"][1]["frontmatter"]["description"] == "Write notes: shorter ones"
        assert after["skills"][1]["resources"][0]["digest"] != before["skills"][0]["resources"][0]["digest"]


async def test_the_gateway_switch_turns_the_skills_off(skilled: tuple[Path, Cli]) -> None:
    folder, cli = skilled
    resources = folder / "resources.yaml"
    async with reapplied(folder, cli, {resources: RESOURCES.replace("skills: true", "skills: false")}):
        for mode in MODES:
            async with agent_client(folder, cli, "writer", mode=mode) as client:
                assert not (client.server_capabilities.extensions or {})
                with pytest.raises(MCPError, match=r"spec\.endpoint\.skills is false") as refused:
                    await call(client, "skills/list")
                assert refused.value.error.code == types.METHOD_NOT_FOUND
                assert (await client.list_resources()).resources == []
                with pytest.raises(MCPError, match="Resource not found"):
                    await client.read_resource("skill://alpha-forms/SKILL.md")
    async with agent_client(folder, cli, "writer") as client:
        assert len((await call(client, "skills/list"))["skills"]) == 2


@pytest.mark.parametrize("mode", MODES)
async def test_traversal_hidden_symlinked_oversized_and_unlisted_files_are_refused(
    skilled: tuple[Path, Cli], mode: str
) -> None:
    folder, cli = skilled
    async with agent_client(folder, cli, "writer", mode=mode) as client:
        refused = {
            "skill://alpha-forms/../brief-notes/SKILL.md": "is not a file of skill 'alpha-forms'",
            "skill://alpha-forms/%2E%2E/%2E%2E/resources.yaml": "is not a file of skill 'alpha-forms'",
            "skill://alpha-forms/.env": "is not a file of skill 'alpha-forms'",
            "skill://alpha-forms/outside.md": "is not a file of skill 'alpha-forms'",
            "skill://alpha-forms/big.bin": "is not a file of skill 'alpha-forms'",
            "skill://code-review/SKILL.md": "Resource not found",  # reviewer's, not writer's
            "skill://needs-bin/SKILL.md": "Resource not found",  # allowed, not eligible
            "skill://zeta-hidden/SKILL.md": "Resource not found",  # not in writer's allowlist
        }
        for uri, message in refused.items():
            with pytest.raises(MCPError, match=message) as caught:
                await client.read_resource(uri)
            assert caught.value.error.code == types.INVALID_PARAMS, uri
        with pytest.raises(MCPError, match="not a skill this agent is served") as caught:
            await call(client, "skills/get", {"uri": "skill://code-review/SKILL.md"})
        assert caught.value.error.code == types.INVALID_PARAMS
        folder_listing = await call(client, "resources/directory/read", {"uri": "skill://alpha-forms"})
        children = {(c["name"], c.get("mimeType")) for c in folder_listing["resources"]}
        assert children == {("SKILL.md", "text/markdown"), ("references", "inode/directory"),
                            ("scripts", "inode/directory")}  # fmt: skip
        with pytest.raises(MCPError, match="not a folder of skill") as caught:
            await call(client, "resources/directory/read", {"uri": "skill://alpha-forms/SKILL.md"})
        assert caught.value.error.code == types.INVALID_PARAMS
