"""The audit trail of a folder's supervisor: hosted and agent endpoints, as the Gateway says.

``clawplane apply`` starts the folder's supervisor; real SDK clients call a fixture server
through the hosted endpoint (the ``openclaw`` token) and through an agent's endpoint (the
agent's own token), including a call held for an approval that expires (refused) and a tool
named like an HTML tag. ``clawplane audit`` shows each call once, with no secret; the
dashboard's audit page shows them escaped and filters them; the Gateway's ``exportLogs`` sends
them to a real OTLP/HTTP receiver; ``enabled: false`` applied stops the recording.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from tests.fixtures.servers.helpers import authed, script
from tests.integration.agentep.conftest import agent_client, endpoint, running, token
from tests.integration.engine.conftest import CANARY, Cli
from tests.integration.runloop.conftest import wait_for
from tests.support.otlp_logs_receiver import LogsReceiver, logs_receiver

from clawplane.state import StateDB

pytestmark = pytest.mark.anyio
SCRIPT_TOOL = "<script>alert(1)</script>"
FOLDER = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: fix}}
spec:
  command: {python}
  args: [{normal}, --name, fix]
  env:
    TOKEN: {{valueFrom: {{env: NOTES_API_TOKEN}}}}
  toolApproval: {{tools: {{add: prompt}}, timeoutMs: 1000}}
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {{name: alpha}}
spec:
  mcpServers: [fix]
---
apiVersion: clawplane.dev/v1alpha1
kind: Gateway
metadata: {{name: default}}
spec:
  observability:
    traces:
      endpoint: "{collector}/v1/traces"
      headers: {{x-collector-key: {{valueFrom: {{env: NOTES_API_TOKEN}}}}}}
    audit: {{enabled: {enabled}, exportLogs: true, maxRecords: 1000, maxAgeDays: 7}}
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write(folder: Path, collector: str, *, enabled: bool = True) -> None:
    text = FOLDER.format(
        python=json.dumps(sys.executable),
        normal=json.dumps(script("normal")),
        collector=collector,
        enabled=json.dumps(enabled),
    )
    (folder / "resources.yaml").write_text(text)


@pytest.fixture
def applied(tmp_path: Path) -> Iterator[tuple[Path, Cli, LogsReceiver]]:
    folder = tmp_path / "folder"
    folder.mkdir()
    with logs_receiver() as receiver:
        write(folder, receiver.url)
        with running(folder) as cli:
            yield folder, cli, receiver


def audit(cli: Cli, folder: Path, *args: str) -> Any:
    shown = cli("audit", str(folder), *args)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert CANARY not in shown.stdout + shown.stderr
    return json.loads(shown.stdout) if "--json" in args else shown.stdout


async def make_calls(folder: Path, cli: Cli) -> None:
    hosted = f"{endpoint(folder)}/mcp/fix"
    async with authed(hosted, token(cli, folder, "openclaw"), mode="auto") as client:
        await client.call_tool("echo", {"message": CANARY})
        assert (await client.call_tool(SCRIPT_TOOL, {})).is_error
    async with agent_client(folder, cli, "alpha", mode="legacy") as client:
        await client.call_tool("fix__echo", {"message": "from the agent"})
        with anyio.fail_after(60):
            held = await client.call_tool("fix__add", {"a": 1, "b": 2})  # expires after 1 s: refused
        assert held.is_error


async def test_calls_through_both_endpoints_are_recorded_shown_and_exported(
    applied: tuple[Path, Cli, LogsReceiver],
) -> None:
    folder, cli, receiver = applied
    await make_calls(folder, cli)
    calls = wait_for(
        "four calls in the trail", lambda: found if len(found := audit(cli, folder, "--json")) >= 4 else None
    )
    by_tool = {c["tool"]: c for c in calls}
    assert len(calls) == 4 and set(by_tool) == {"echo", SCRIPT_TOOL, "add"} | {c["tool"] for c in calls}
    hosted = [c for c in calls if c["endpoint"] == "hosted"]
    agent = [c for c in calls if c["endpoint"] == "agent"]
    assert [(c["tool"], c["outcome"], c["consumer"]) for c in reversed(hosted)] == [
        ("echo", "ok", "openclaw"),
        (SCRIPT_TOOL, "tool_error", "openclaw"),
    ]
    assert [(c["outcome"], c["consumer"], c["agent"], c["server"]) for c in reversed(agent)] == [
        ("ok", "agent:alpha", "alpha", "fix"),
        ("refused", "agent:alpha", "alpha", "fix"),
    ]
    assert 500 <= agent[0]["heldMs"] < 60_000  # it waited (about 1 s) for the approval that expired
    # bytesOut is the server's answer as it wrote it; the proxy's own refusal was never the server's
    assert hosted[-1]["bytesOut"] > len("from the agent") and agent[0]["bytesOut"] == 0
    assert audit(cli, folder, "--json", "--agent", "alpha", "--outcome", "refused") == [agent[0]]
    jsonl = audit(cli, folder, "--jsonl", "--since", "1h")
    assert [json.loads(line) for line in jsonl.splitlines()] == calls
    db = StateDB.open(folder / ".clawplane", create=False)
    try:
        assert CANARY not in json.dumps(db.dump())
    finally:
        db.close()

    base = endpoint(folder)
    with httpx.Client(base_url=base, headers={"Origin": base}, timeout=10) as client:
        assert client.post("/ui/login", data={"token": token(cli, folder, "cli")}).status_code == 303
        page = client.get("/ui/audit").text
        refused = client.get("/ui/audit", params={"outcome": "refused"}).text
        nothing = client.get("/ui/audit", params={"server": "<b>nope</b>"}).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and SCRIPT_TOOL not in page
    assert page.count("<tr>") - page.count("<tr><td colspan") >= 4 and CANARY not in page
    section = refused.split('id="calls"', 1)[1]
    assert "refused" in section and "openclaw" not in section
    assert "No tool calls recorded that match" in nothing and "&lt;b&gt;nope&lt;/b&gt;" in nothing

    exported = await anyio.to_thread.run_sync(lambda: receiver.wait_for(lambda seen: len(seen) >= 4, 60))
    assert sorted(r["attributes"]["clawplane.outcome"] for r in exported) == [
        "ok",
        "ok",
        "refused",
        "tool_error",
    ]
    assert {r["attributes"]["clawplane.server"] for r in exported} == {"fix"}
    assert CANARY not in repr(exported)
    # The log records go to the traces' collector with the traces' headers, resolved from valueFrom
    # (the stored Gateway has them redacted: they come from the live trace export).
    assert receiver.headers and {h.get("x-collector-key") for h in receiver.headers} == {CANARY}


async def test_the_gateway_turns_recording_off(applied: tuple[Path, Cli, LogsReceiver]) -> None:
    folder, cli, receiver = applied
    hosted = f"{endpoint(folder)}/mcp/fix"
    async with authed(hosted, token(cli, folder, "openclaw"), mode="auto") as client:
        await client.call_tool("echo", {"message": "kept"})
    write(folder, receiver.url, enabled=False)
    assert cli("apply", str(folder), "--yes").returncode == 0
    async with authed(hosted, token(cli, folder, "openclaw"), mode="auto") as client:
        await client.call_tool("echo", {"message": "not kept"})
    assert cli("down", str(folder)).returncode == 0  # a clean stop: anything queued is written
    calls = audit(cli, folder, "--json")
    assert [c["tool"] for c in calls] == ["echo"]
