"""Plan approvals answered over MCP under ``clawplane run``, followed through ``events_wait``.

A rule holds McpServer deletes. A commit deleting a server leaves it running and one pending
request (with its diff) appears in ``approvals_list`` and as an ``approval_requested`` event;
the ``reader`` token may look but not answer; ``approvals_respond approve`` (``cli`` token,
HTTP) removes the server; a second one, rejected over stdio, stays; every answer is in
``audit_list`` under the MCP caller's name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from tests.integration.approvals.conftest import guarded  # noqa: F401  (the fixture)
from tests.integration.mcpserve.conftest import control
from tests.integration.mcpserve.test_tools import _texts, call, schemas_of
from tests.integration.runloop.conftest import Loop

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _head(client: Client, schemas: dict[str, Any]) -> int:
    """The cursor after every event stored so far."""
    cursor = 0
    while True:
        page = await call(client, schemas, "events_wait", cursor=cursor, limit=200)
        if not page["events"]:
            return cursor
        cursor = page["next_cursor"]


async def _wait_event(client: Client, schemas: dict[str, Any], cursor: int, kind: str, status: str) -> int:
    """Wait (in events_wait's own long poll) for an approval event; its cursor."""
    for _ in range(10):  # each wait is at most 60 s; a loaded box may need several
        page = await call(client, schemas, "events_wait", cursor=cursor, timeout_ms=60000, limit=50)
        for event in page["events"]:
            if event["type"] == kind and event["data"].get("status") == status:
                return int(event["cursor"])
        cursor = page["next_cursor"]
    raise AssertionError(f"no {kind} {status} event")


async def _running(client: Client, schemas: dict[str, Any]) -> set[str]:
    status = await call(client, schemas, "status")
    return {r["name"] for r in status["resources"] if r["kind"] == "McpServer" and r["phase"] == "Ready"}


# ~40 s idle (a run with four servers, two held deletes); several times that on a loaded box.
@pytest.mark.timeout(600)
async def test_held_deletes_are_answered_over_mcp(guarded: Loop) -> None:  # noqa: F811
    folder, cli = guarded.folder, guarded.cli
    async with (
        control("http", folder, cli) as operator,
        control("http", folder, cli, consumer="reader") as reader,
        control("stdio", folder, cli, mode="legacy") as local,
    ):
        schemas = await schemas_of(operator)
        cursor = await _head(operator, schemas)
        assert {"notes-two", "notes-three"} <= await _running(operator, schemas)

        Path(folder / "notes-two.yaml").unlink()
        cursor = await _wait_event(operator, schemas, cursor, "approval_requested", "pending")
        (pending,) = (await call(reader, schemas, "approvals_list"))["approvals"]
        (action,) = pending["subject"]["actions"]
        assert (action["action"], action["key"]) == ("delete", "McpServer/notes-two")
        assert {"path": "spec.command", "op": "removed", "before": "python3", "after": None} in action["diff"]
        assert "notes-two" in await _running(operator, schemas)  # held: it keeps running

        refused = await reader.call_tool("approvals_respond", {"id": pending["id"], "decision": "approve"})
        assert refused.is_error and "lacks the approve scope" in _texts(refused)
        answer = await call(operator, schemas, "approvals_respond", id=pending["id"], decision="approve",
                            reason="retired")  # fmt: skip
        assert answer["approval"]["status"] in ("approved", "applied")
        cursor = await _wait_event(operator, schemas, cursor, "approval_resolved", "applied")
        assert "notes-two" not in {r["name"] for r in (await call(operator, schemas, "status"))["resources"]}

        Path(folder / "notes-three.yaml").unlink()
        cursor = await _wait_event(operator, schemas, cursor, "approval_requested", "pending")
        (second,) = (await call(local, schemas, "approvals_list"))["approvals"]
        rejected = await call(local, schemas, "approvals_respond", id=second["id"], decision="reject",
                              reason="still in use")  # fmt: skip
        assert rejected["approval"]["status"] == "rejected"
        await _wait_event(operator, schemas, cursor, "approval_resolved", "rejected")
        assert "notes-three" in await _running(operator, schemas)
        assert (await call(operator, schemas, "approvals_list"))["approvals"] == []
        found = (await call(operator, schemas, "approvals_list", status="rejected"))["approvals"]
        assert [a["id"] for a in found] == [second["id"]]

        audit = (await call(reader, schemas, "audit_list", limit=50))["entries"]
        answers = [(e["user"], e["outcome"]) for e in audit if e["outcome"] in ("approval-approved", "approval-rejected")]
        assert [o for _, o in answers] == ["approval-rejected", "approval-approved"]  # newest first
        assert answers[1][0] == "mcp:cli" and answers[0][0].startswith("mcp:local:")
