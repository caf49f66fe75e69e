"""Every control-plane tool on the applied quickstart, through the SDK client over real stdio and HTTP.

``clawplane mcp serve`` runs as its own process (stdio); ``/mcp/_clawplane`` is served by the
folder's supervisor. Both eras are spoken (``auto`` negotiates 2026-07-28, ``legacy`` the
handshake). Each answer is JSON in ``structuredContent`` that its ``outputSchema`` accepts,
the same JSON as its text, and no text carries the canary secret or a bearer token.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import mcp_types as types
import pytest
from mcp import Client
from tests.integration.engine.conftest import CANARY, ROOT, Cli
from tests.integration.mcpserve.conftest import MODES, TRANSPORTS, control, endpoint

from clawplane.state.tokens import TOKEN_PREFIX

pytestmark = pytest.mark.anyio

TOOL_NAMES = [
    "status", "resources_list", "resource_get", "validate", "plan", "explain", "agent_tools",
    "agent_skills", "events_wait", "approvals_list", "approvals_respond", "audit_list",
]  # fmt: skip


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _texts(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def call(client: Client, schemas: dict[str, Any], tool: str, /, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; check its JSON against its output schema and its text."""
    result = await client.call_tool(tool, arguments)
    text = _texts(result)
    assert not result.is_error, f"{tool}: {text}"
    assert CANARY not in text and TOKEN_PREFIX not in text, text
    structured = result.structured_content
    assert isinstance(structured, dict)
    jsonschema.validate(structured, schemas[tool])
    assert json.loads(text) == structured
    return structured


async def schemas_of(client: Client) -> dict[str, Any]:
    listed = await client.list_tools()
    assert [t.name for t in listed.tools] == TOOL_NAMES
    for tool in listed.tools:
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", tool.name
        assert tool.input_schema["additionalProperties"] is False, tool.name
    return {t.name: t.output_schema for t in listed.tools}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_tool_answers_on_the_quickstart(
    quickstart: tuple[Path, Cli], transport: str, mode: str
) -> None:
    folder, cli = quickstart
    out = folder / ".clawplane" / "out"
    async with control(transport, folder, cli, mode=mode) as client:
        schemas = await schemas_of(client)

        status = await call(client, schemas, "status")
        phases = {r["key"]: r["phase"] for r in status["resources"]}
        assert phases["McpServer/notes"] == "Ready" and status["supervisor"]["running"] is True
        shown = cli.json("status", str(folder), "--json")
        assert phases == {r["key"]: r["phase"] for r in shown["resources"]}
        (notes,) = (await call(client, schemas, "status", name="notes"))["resources"]
        assert notes["key"] == "McpServer/notes" and "stderr" in notes

        listed = await call(client, schemas, "resources_list", kind="McpServer")
        assert sorted(r["name"] for r in listed["resources"]) == ["docs-search", "notes"]
        one = await call(client, schemas, "resource_get", name="McpServer/notes")
        assert one["file"].endswith("mcp-servers.yaml") and one["line"] >= 1
        assert one["spec"]["command"] == "python3"

        checked = await call(client, schemas, "validate", path=".")
        assert checked == cli.json("validate", str(folder), "--format", "json")

        planned = await call(client, schemas, "plan")
        assert planned["hasChanges"] is False and planned["held"] == []
        assert planned["plan"]["changes"] == cli.json("plan", str(folder), "-f", "json")["changes"]
        assert planned["text"].strip() == cli("plan", str(folder)).stdout.strip()

        field = await call(client, schemas, "explain", field="mcpserver.spec.transport")
        assert field["path"].endswith("transport") and "stdio" in json.dumps(field)

        tools = await call(client, schemas, "agent_tools", agent="coder")
        assert tools["tools"] == json.loads((out / "agents" / "coder" / "tools.json").read_text())
        assert tools["count"] == len(tools["tools"]) > 0
        prompt = await call(client, schemas, "agent_skills", agent="coder", view="prompt")
        assert prompt["text"] == (out / "agents" / "coder" / "skills-prompt.txt").read_text()
        skills = await call(client, schemas, "agent_skills", agent="writer", view="check")
        assert skills["agent"] == "writer"

        events = await call(client, schemas, "events_wait", cursor=0, limit=5)
        assert events["events"] and events["next_cursor"] == events["events"][-1]["cursor"]
        assert {e["type"] for e in events["events"]} <= {
            "pass_started", "pass_finished", "phase_changed", "tools_changed", "diagnostics",
            "approval_requested", "approval_resolved",
        }  # fmt: skip

        assert (await call(client, schemas, "approvals_list"))["approvals"] == []
        audit = await call(client, schemas, "audit_list", limit=5)
        assert audit["entries"][-1]["outcome"] == "success" and audit["entries"][-1]["planHash"]

        missing = await client.call_tool("resource_get", {"name": "nowhere"})
        assert missing.is_error and "declared:" in _texts(missing)
        outside = await client.call_tool("validate", {"path": "../.."})
        assert outside.is_error and "outside the folder" in _texts(outside)
        extra = await client.call_tool("events_wait", {"timeout_ms": 60001})
        assert extra.is_error and "timeout_ms" in _texts(extra)

        resources = await client.list_resources()
        uris = {str(r.uri) for r in resources.resources}
        assert {"clawplane://status", "clawplane://plan", "clawplane://agents/coder/prompt"} <= uris
        read = await client.read_resource("clawplane://agents/coder/prompt")
        (content,) = read.contents
        assert isinstance(content, types.TextResourceContents)
        assert content.text == prompt["text"]


def _cli_diagnostics(cli: Cli, path: Path) -> dict[str, Any]:
    done = cli("validate", str(path), "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def _normalized(doc: dict[str, Any], root: Path) -> Any:
    """``doc`` with ``root`` (where its files are) written as ``<dir>``, in files and messages alike."""
    return json.loads(json.dumps(doc).replace(str(root), "<dir>"))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_validate_of_the_invalid_examples_matches_the_cli(
    quickstart: tuple[Path, Cli], transport: str, tmp_path: Path
) -> None:
    folder, cli = quickstart
    copy = tmp_path / "invalid"
    shutil.copytree(ROOT / "examples" / "invalid", copy)
    files = sorted(copy.glob("*.yaml"))
    async with control(transport, folder, cli) as client:
        schemas = await schemas_of(client)
        for path in files:
            got = await call(client, schemas, "validate",
                             documents=[{"file": f"invalid/{path.name}", "text": path.read_text()}])  # fmt: skip
            want = _cli_diagnostics(cli, path)
            assert _normalized(got, folder) == _normalized(want, tmp_path), path.name
            assert got["valid"] is False
        together = [{"file": f"invalid/{p.name}", "text": p.read_text()} for p in files]
        got = await call(client, schemas, "validate", documents=together)
        assert _normalized(got, folder) == _normalized(_cli_diagnostics(cli, copy), tmp_path)


async def test_scopes_on_the_supervisor_endpoint(quickstart: tuple[Path, Cli]) -> None:
    """``reader`` reads but answers nothing; a gateway token does not reach the control plane."""
    folder, cli = quickstart
    async with control("http", folder, cli, consumer="reader") as client:
        schemas = await schemas_of(client)
        assert (await call(client, schemas, "approvals_list"))["approvals"] == []
        refused = await client.call_tool("approvals_respond", {"id": "apr-none", "decision": "approve"})
        assert refused.is_error and 'token of "reader" lacks the approve scope' in _texts(refused)
    async with control("http", folder, cli, consumer="cli") as client:
        unknown = await client.call_tool("approvals_respond", {"id": "apr-none", "decision": "approve"})
        assert unknown.is_error and "apr-none" in _texts(unknown)

    url = endpoint(folder) + "/mcp/_clawplane"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(timeout=30) as http:
        assert (await http.post(url, json=body, headers=headers)).status_code == 401
        gateway = cli("token", "show", str(folder), "openclaw").stdout.strip()
        forbidden = await http.post(url, json=body, headers={**headers, "Authorization": f"Bearer {gateway}"})
        assert forbidden.status_code == 403 and "openclaw" in forbidden.text
        token = cli("token", "show", str(folder), "cli").stdout.strip()
        foreign = await http.post(
            url, json=body, headers={**headers, "Authorization": f"Bearer {token}", "Origin": "https://evil.example"}
        )
        assert foreign.status_code == 403
