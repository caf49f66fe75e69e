"""Tool-call approvals on the per-agent endpoint ``/mcp/agents/<agent>``, under a real supervisor.

An Agent over the gated fixture twice (``write_note: prompt``, ``delete_*: auto``; one waits 3 s,
``patient`` 5 minutes, so a cancellation cannot be mistaken for an expiry). A
gated call made through the agent endpoint with the agent's own token shows progress that
names its request while it waits and, unanswered, fails with a tool error once the request
expires; a read-only tool under ``auto`` passes without a request; a call the client cancels
withdraws its request. (Approve and reject over ``/mcp/_clawplane``: test_agent_endpoint.py.)
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.fixtures.servers.helpers import script
from tests.integration.agentep.conftest import agent_client
from tests.integration.engine.conftest import Cli, processes_under

from clawplane.approvals import ApprovalKind, ApprovalQueue, Status
from clawplane.state import StateDB

pytestmark = pytest.mark.anyio
MODES = ("auto", "legacy")  # auto negotiates 2026-07-28, legacy the handshake era
WAIT_S = 3

FOLDER = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: gated}}
spec:
  command: {python}
  args: [{gated}]
  toolApproval: {{tools: {{write_note: prompt, "delete_*": auto, lookup: auto}}, timeoutMs: {wait_ms}}}
---
apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {{name: patient}}
spec:
  command: {python}
  args: [{gated}]
  toolApproval: {{tools: {{"delete_*": auto}}, timeoutMs: 300000}}
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata: {{name: writer}}
spec:
  mcpServers: [gated, patient]
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def writer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Cli]]:
    folder = tmp_path_factory.mktemp("agentapr") / "folder"
    folder.mkdir()
    (folder / "resources.yaml").write_text(
        FOLDER.format(python=json.dumps(sys.executable), gated=json.dumps(script("gated")), wait_ms=WAIT_S * 1000)
    )
    cli = Cli(folder)
    try:
        done = cli("apply", str(folder), "--yes")
        assert done.returncode == 0, done.stdout + done.stderr
        yield folder, cli
    finally:
        cli("down", str(folder))
        for proc in processes_under(folder):
            proc.kill()


def _text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


@contextlib.contextmanager
def _queue(folder: Path) -> Iterator[ApprovalQueue]:
    db = StateDB.open(folder / ".clawplane", create=False)
    try:
        yield ApprovalQueue(db)
    finally:
        db.close()


@pytest.mark.parametrize("mode", MODES)
async def test_an_unanswered_call_on_the_agent_endpoint_expires_with_progress_and_a_clear_error(
    writer: tuple[Path, Cli], mode: str
) -> None:
    folder, cli = writer
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with agent_client(folder, cli, "writer", mode=mode, read_timeout_seconds=120) as client:
        passed = await client.call_tool("gated__lookup", {"key": "k"})  # auto + read-only: no request
        with anyio.fail_after(120):
            expired = await client.call_tool("gated__write_note", {"title": "late"}, progress_callback=on_progress)

    assert _text(passed) == "value of k"
    assert expired.is_error
    message = _text(expired)
    assert f"not approved within {WAIT_S}s" in message and "expired" in message
    approval_id = message.split("(approval ", 1)[1].split()[0]
    assert seen and seen[0][0] == 0.0 and seen[0][1] == WAIT_S
    assert all(m is not None and approval_id in m for _, _, m in seen)
    with _queue(folder) as queue:
        found = queue.get(approval_id)
        lookups = [a for a in queue.find(statuses=None, kind=ApprovalKind.TOOL) if a.subject["tool"] == "lookup"]
    assert found is not None and found.status is Status.EXPIRED
    assert found.subject["endpoint"] == "/mcp/agents/writer" and found.subject["caller"] == "agent:writer"
    assert lookups == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_cancelled_on_the_agent_endpoint_withdraws_its_request(
    writer: tuple[Path, Cli], mode: str
) -> None:
    folder, cli = writer
    waiting = anyio.Event()
    messages: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message)
        waiting.set()

    async with agent_client(folder, cli, "writer", mode=mode, read_timeout_seconds=120) as client:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: client.call_tool("patient__delete_note", {"title": "n"}, progress_callback=on_progress))
                with anyio.fail_after(60):
                    await waiting.wait()  # the request exists: the gate reported its first progress
                scope.cancel()
        ran = _text(await client.call_tool("patient__ran", {}))
    approval_id = str(messages[0]).split("waiting for approval ", 1)[1].split()[0]
    with _queue(folder) as queue:
        withdrawn = await queue.wait(approval_id, timeout=60)
    assert withdrawn.status is Status.CANCELLED and withdrawn.subject["tool"] == "delete_note"
    assert "delete_note" not in ran
