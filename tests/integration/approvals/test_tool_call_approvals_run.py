"""Tool-call approvals under ``clawplane run``: a gated call on the hosted endpoint, answered elsewhere.

The quickstart plus a hosted fixture whose ``write_note`` is gated (``prompt``). The caller
(the ``openclaw`` token, on ``/mcp/gated``) blocks; the request shows in ``approvals_list``
on ``/mcp/_clawplane`` (another MCP session), in ``clawplane approvals list`` and on the
dashboard's Approvals page; approved over MCP the call runs, rejected with ``clawplane
approvals reject`` the next one fails with a tool error naming the request. Requests and
answers are events and audit entries.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from tests.fixtures.providers.quickstart import KEY_ENV, fake_quickstart_provider
from tests.fixtures.servers.helpers import authed
from tests.integration.approvals.conftest import approvals
from tests.integration.engine.conftest import Cli, processes_under
from tests.integration.mcpserve.conftest import control, endpoint
from tests.integration.mcpserve.test_approvals import _head
from tests.integration.mcpserve.test_tools import call, schemas_of
from tests.integration.runloop.conftest import Loop
from tests.support.quickstart import copy_fixture, copy_quickstart

pytestmark = pytest.mark.anyio

GATED = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: gated
spec:
  command: python3
  args: [servers/gated_server.py]
  cwd: .
  toolApproval:
    tools:
      write_note: prompt
    timeoutMs: 120000
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[Loop]:
    """The quickstart + the gated fixture, watched by ``clawplane run``."""
    folder = tmp_path / "quickstart"
    copy_quickstart(folder)
    copy_fixture("gated", folder / "servers")
    (folder / "gated.yaml").write_text(GATED)
    cli = Cli(folder)
    loop = Loop(folder, cli)
    with fake_quickstart_provider(folder) as fake:
        cli.env[KEY_ENV] = fake.key or ""
        try:
            started = cli("run", str(folder), "--detach", "--resync-interval", "2")
            assert started.returncode == 0, started.stdout + started.stderr
            loop.wait_settled(timeout=120)
            yield loop
        finally:
            cli("down", str(folder))
            for proc in processes_under(folder):
                proc.kill()


async def _requested(client: Any, schemas: dict[str, Any], cursor: int) -> tuple[str, int]:
    """Wait (in events_wait's long poll) for the next approval request; its id and cursor."""
    for _ in range(10):  # each wait is at most 60 s; a loaded box may need several
        page = await call(client, schemas, "events_wait", cursor=cursor, timeout_ms=60000, limit=50)
        for event in page["events"]:
            if event["type"] == "approval_requested":
                return str(event["subject"]), int(event["cursor"])
        cursor = page["next_cursor"]
    raise AssertionError("no approval_requested event")


def _text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


# ~40 s idle (a run with three servers, two held calls); several times that on a loaded box.
@pytest.mark.timeout(600)
async def test_a_gated_call_is_answered_from_another_mcp_session_and_the_cli(gated: Loop) -> None:
    folder, cli = gated.folder, gated.cli
    caller_token = cli("token", "show", str(folder), "openclaw").stdout.strip()
    url = endpoint(folder) + "/mcp/gated"
    async with (
        control("http", folder, cli) as operator,
        authed(url, caller_token, mode="legacy", read_timeout_seconds=300) as caller,
    ):
        schemas = await schemas_of(operator)
        cursor = await _head(operator, schemas)
        box: list[Any] = []
        seen: list[str | None] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(message)

        async def first_call() -> None:
            box.append(await caller.call_tool("write_note", {"title": "one"}, progress_callback=on_progress))

        async with anyio.create_task_group() as tg:
            tg.start_soon(first_call)
            first_id, cursor = await _requested(operator, schemas, cursor)
            (listed,) = (await call(operator, schemas, "approvals_list"))["approvals"]
            assert listed["id"] == first_id and listed["kind"] == "tool"
            assert listed["subject"]["tool"] == "write_note" and listed["subject"]["caller"] == "openclaw"
            assert listed["subject"]["endpoint"] == "/mcp/gated"
            assert not box  # still waiting
            answer = await call(operator, schemas, "approvals_respond", id=first_id, decision="approve",
                                reason="looks fine")  # fmt: skip
            assert answer["approval"]["status"] == "approved"
        (approved,) = box
        assert not approved.is_error and _text(approved) == "wrote one"
        assert any(m and first_id in m for m in seen)

        async def second_call() -> None:
            box.append(await caller.call_tool("write_note", {"title": "two"}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(second_call)
            second_id, cursor = await _requested(operator, schemas, cursor)
            (pending,) = await anyio.to_thread.run_sync(approvals, cli, folder)
            assert pending["id"] == second_id and pending["subject"]["arguments"] == {"title": "two"}
            page = await anyio.to_thread.run_sync(_dashboard_approvals, gated)
            assert second_id in page and "write_note" in page
            done = await anyio.to_thread.run_sync(
                lambda: cli("approvals", "reject", str(folder), second_id, "--reason", "not now")
            )
            assert done.returncode == 0, done.stdout + done.stderr
        rejected = box[1]
        assert rejected.is_error
        assert f"approval {second_id}" in _text(rejected) and "not now" in _text(rejected)
        ran = _text(await caller.call_tool("ran", {}))
        audit = (await call(operator, schemas, "audit_list", limit=50))["entries"]

    assert ran == "write_note one"  # the rejected call never reached the server
    outcomes = [(e["outcome"], e["user"]) for e in audit if "tool/gated/write_note" in str(e.get("actions"))]
    assert ("approval-requested", "openclaw") in outcomes
    assert ("approval-approved", "mcp:cli") in outcomes
    assert any(o == "approval-rejected" and u.startswith("cli:") for o, u in outcomes)


def _dashboard_approvals(loop: Loop) -> str:
    base = str(loop.info()["endpoint"])
    token = loop.cli("token", "show", str(loop.folder), "cli").stdout.strip()
    with httpx.Client(base_url=base, headers={"Origin": base}, timeout=30) as client:
        assert client.post("/ui/login", data={"token": token}).status_code == 303
        page = client.get("/ui/approvals")
        assert page.status_code == 200
        return page.text
