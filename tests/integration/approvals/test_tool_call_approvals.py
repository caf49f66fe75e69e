"""Tool-call approvals on the hosted endpoint: real stdio servers, real HTTP, SDK clients, a real queue.

A hosted server with ``toolApproval`` rules is served by a real ``Supervisor``; its gate is
``ToolCallApprovals`` over a real state database. A gated call waits (progress reaches the
caller) until a second party answers in the queue; approved calls run, rejected and expired
ones fail with a tool error naming the request, and a call the caller abandons withdraws its
request. Modes follow Codex: ``prompt`` holds, ``approve`` passes, ``auto`` holds unless the
tool's annotations say it is safe. Both protocol eras (``auto`` negotiates 2026-07-28).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.fixtures.servers.helpers import (
    CLAWPLANE,
    FAST,
    START_TIMEOUT,
    TOKEN,
    authed,
    bridge_process,
    guard,
    script,
    stdio_spec,
)

from clawplane.approvals import Approval, ApprovalKind, ApprovalQueue, Decision, Status, ToolCallApprovals
from clawplane.events import EventQueue
from clawplane.k8s.objects.children import Owner, server_deployment
from clawplane.models.mcpserver import ToolApproval
from clawplane.runtimes import Phase, Supervisor
from clawplane.state import StateDB

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
RULES = {"write_note": "prompt", "delete_*": "auto", "lookup": "auto", "echo": "approve"}
ANSWER_S = 60.0
"""How long a test waits for something the endpoint does at once (a loaded 2-core box)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Rig:
    """A supervisor serving the gated fixture, its approval queue, and its requests as they come."""

    def __init__(self, supervisor: Supervisor, queue: ApprovalQueue, url: str) -> None:
        self.supervisor, self.queue, self.url = supervisor, queue, url
        self.requested = anyio.Event()
        assert queue.events is not None
        queue.events.subscribe(self._event)

    def _event(self, event: Any) -> None:
        if event.type == "approval_requested":
            self.requested.set()

    async def pending(self) -> Approval:
        """The one pending tool-call request, once the gate made it."""
        with anyio.fail_after(ANSWER_S):
            await self.requested.wait()
        (approval,) = self.queue.find(kind=ApprovalKind.TOOL)
        return approval


@contextlib.asynccontextmanager
async def rig(tmp_path: Path, *, timeout_ms: int = 60_000, gate: bool = True) -> AsyncIterator[Rig]:
    db = StateDB.open(tmp_path / "state")
    events = EventQueue(db)
    queue = ApprovalQueue(db, events)
    spec = stdio_spec("gated", tool_approval=ToolApproval(tools=RULES, timeout_ms=timeout_ms))  # type: ignore[arg-type]
    async with Supervisor(settings=FAST) as supervisor:
        if gate:
            supervisor.tool_gate = ToolCallApprovals(queue, progress_every=0.2)
        await supervisor.ensure("gated", spec, config_hash="h", base_dir=tmp_path)
        await supervisor.wait_until("gated", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
        endpoint = await supervisor.expose(guard())
        yield Rig(supervisor, queue, endpoint.url("gated"))


def text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


class Progress:
    """Records progress notifications; ``first`` is set by the first one."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []
        self.first = anyio.Event()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))
        self.first.set()


@pytest.mark.parametrize("mode", MODES)
async def test_a_gated_call_waits_until_approved_and_the_caller_sees_progress(tmp_path: Path, mode: str) -> None:
    async with rig(tmp_path) as r, authed(r.url, mode=mode) as client:
        progress, box = Progress(), []

        async def call() -> None:
            box.append(await client.call_tool(
                "write_note", {"title": "plan", "api_token": "tok-4242-secret"}, progress_callback=progress
            ))  # fmt: skip

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            pending = await r.pending()
            with anyio.fail_after(ANSWER_S):
                await progress.first.wait()
            assert text(await client.call_tool("ran", {})) == "nothing"  # held: not run yet
            assert not box
            r.queue.respond(pending.id, Decision.APPROVE, by="operator", reason="fine")
        ran = text(await client.call_tool("ran", {}))

    (result,) = box
    assert not result.is_error and text(result) == "wrote plan"
    assert ran == "write_note plan"
    subject = pending.subject
    assert (subject["server"], subject["tool"], subject["caller"], subject["rule"], subject["mode"]) == (
        "gated", "write_note", "test", "write_note", "prompt"
    )  # fmt: skip
    assert subject["arguments"] == {"title": "plan", "api_token": "<redacted>"}
    assert pending.requested_by == "test" and pending.summary == "tool call: gated.write_note by test"
    # Progress: at 0 first, rising, with the wait as total, naming the request and how to answer it.
    first_value, total, message = progress.seen[0]
    assert first_value == 0.0 and total == 60.0
    assert message is not None and pending.id in message and f"clawplane approvals approve {pending.id}" in message
    values = [p for p, _, _ in progress.seen]
    assert values == sorted(values)
    done = r.queue.get(pending.id)
    assert done is not None and (done.status, done.resolved_by) == (Status.APPROVED, "operator")
    types = [(e.type, e.subject) for e in EventQueue(r.queue.db).page(0, limit=50).events]
    assert ("approval_requested", pending.id) in types and ("approval_resolved", pending.id) in types


@pytest.mark.parametrize("mode", MODES)
async def test_a_rejected_call_fails_with_a_tool_error_naming_the_request(tmp_path: Path, mode: str) -> None:
    async with rig(tmp_path) as r, authed(r.url, mode=mode) as client:
        box: list[Any] = []
        progress = Progress()

        async def call() -> None:
            box.append(await client.call_tool("write_note", {"title": "x"}, progress_callback=progress))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            pending = await r.pending()
            r.queue.respond(pending.id, Decision.REJECT, by="operator", reason="not on a Friday")
        ran = text(await client.call_tool("ran", {}))

    (result,) = box
    assert result.is_error
    message = text(result)
    assert f"approval {pending.id}" in message and "rejected by operator: not on a Friday" in message
    assert "was not run" in message
    assert ran == "nothing"
    meta = result.meta or {}
    assert meta.get("dev.clawplane/approval") == {"id": pending.id, "status": "rejected"}


@pytest.mark.parametrize("mode", MODES)
async def test_an_unanswered_call_expires_with_a_clear_error(tmp_path: Path, mode: str) -> None:
    async with rig(tmp_path, timeout_ms=1500) as r, authed(r.url, mode=mode) as client:
        with anyio.fail_after(ANSWER_S):
            result = await client.call_tool("write_note", {"title": "late"})
        ran = text(await client.call_tool("ran", {}))
        (expired,) = r.queue.find(statuses=None, kind=ApprovalKind.TOOL)

    assert result.is_error
    message = text(result)
    assert f"approval {expired.id} expired" in message and "not approved within 1.5s" in message
    assert "clawplane approvals approve" in message and "timeoutMs" in message
    assert expired.status is Status.EXPIRED and ran == "nothing"


@pytest.mark.parametrize("mode", MODES)
async def test_modes_follow_codex_auto_lets_safe_tools_pass(tmp_path: Path, mode: str) -> None:
    async with rig(tmp_path) as r, authed(r.url, mode=mode) as client:
        lookup = await client.call_tool("lookup", {"key": "a"})  # auto + read-only annotations: passes
        echo = await client.call_tool("echo", {"message": "hi"})  # approve: never asks
        add = await client.call_tool("add", {"a": 1, "b": 2})  # no rule: not held
        assert r.queue.find(statuses=None, kind=ApprovalKind.TOOL) == []
        box: list[Any] = []

        async def destructive() -> None:
            box.append(await client.call_tool("delete_note", {"title": "n"}))  # auto + destructive: held

        async with anyio.create_task_group() as tg:
            tg.start_soon(destructive)
            pending = await r.pending()
            r.queue.respond(pending.id, Decision.APPROVE, by="operator")

    assert text(lookup) == "value of a" and text(echo) == "echo: hi" and text(add) == "3"
    assert pending.subject["rule"] == "delete_*" and pending.subject["mode"] == "auto"
    assert text(box[0]) == "deleted n"


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_the_client_cancels_withdraws_its_approval(tmp_path: Path, mode: str) -> None:
    async with rig(tmp_path) as r, authed(r.url, mode=mode) as client:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "write_note", {"title": "gone"})
                pending = await r.pending()
                scope.cancel()
        withdrawn = await r.queue.wait(pending.id, timeout=ANSWER_S)
        ran = text(await client.call_tool("ran", {}))

    assert withdrawn.status is Status.CANCELLED
    # The handshake era cancels with notifications/cancelled; the 2026-07-28 era closes the request's stream.
    expected = {"legacy": "the caller cancelled the call (notifications/cancelled)",
                "auto": "the caller went away (request 2 ended before an answer)"}  # fmt: skip
    assert withdrawn.reason == expected[mode]
    assert ran == "nothing"


async def test_without_an_approval_queue_a_gated_call_is_refused_not_run(tmp_path: Path) -> None:
    async with rig(tmp_path, gate=False) as r, authed(r.url, mode="legacy") as client:
        refused = await client.call_tool("write_note", {"title": "x"})
        passed = await client.call_tool("lookup", {"key": "k"})
        ran = text(await client.call_tool("ran", {}))

    assert refused.is_error and "has no approval queue" in text(refused)
    assert text(passed) == "value of k" and ran == "lookup k"


async def test_the_bridge_refuses_the_calls_its_tool_approval_holds() -> None:
    gated = '{"tools": {"write_*": "prompt", "lookup": "auto"}}'
    async with (
        bridge_process(sys.executable, script("gated"), args=["--tool-approval", gated]) as (_, url),
        authed(url, mode="legacy") as client,
    ):
        refused = await client.call_tool("write_note", {"title": "x"})
        passed = await client.call_tool("lookup", {"key": "k"})
        ran = text(await client.call_tool("ran", {}))

    assert refused.is_error and "has no approval queue" in text(refused) and "it was not run" in text(refused)
    assert text(passed) == "value of k" and ran == "lookup k"


async def test_the_bridge_refuses_a_malformed_tool_approval() -> None:
    process = await anyio.run_process(
        [*CLAWPLANE, "bridge", "--port", "0", "--tool-approval", '{"tools": {"x": "always"}}', "--", "true"],
        check=False, env={**os.environ, "CLAWPLANE_BRIDGE_TOKEN": TOKEN},
    )  # fmt: skip
    assert process.returncode == 2
    assert b"--tool-approval is not a toolApproval object: tools.x:" in process.stderr


def test_kubernetes_bridge_pods_get_the_tool_approval() -> None:
    spec = stdio_spec("gated", tool_approval=ToolApproval(tools={"write_*": "prompt"}))  # type: ignore[dict-item]
    argv = server_deployment("gated", "demo", spec, owner=Owner("McpServer", "gated", "u1"), image="img",
                             config_hash="h")["spec"]["template"]["spec"]["containers"][0]["command"]  # fmt: skip
    flag = argv.index("--tool-approval")
    assert json.loads(argv[flag + 1]) == {"tools": {"write_*": "prompt"}, "timeoutMs": 50000}
    assert argv.index("--") > flag
