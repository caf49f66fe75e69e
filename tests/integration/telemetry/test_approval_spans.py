"""A call held for an approval has an ``approval hold`` span, and its upstream request comes after it.

The gated fixture behind a real ``Supervisor`` whose gate is ``ToolCallApprovals`` over a real
state database; spans go to a real loopback OTLP receiver.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, authed, guard, stdio_spec
from tests.support.otlp_receiver import otlp_receiver

from clawplane.approvals import ApprovalKind, ApprovalQueue, Decision, ToolCallApprovals
from clawplane.events import EventQueue
from clawplane.models.mcpserver import ToolApproval
from clawplane.runtimes import Phase, Supervisor
from clawplane.state import StateDB
from clawplane.telemetry import CallSpans, CallTelemetry, TraceConfig, Tracing

pytestmark = pytest.mark.anyio
ANSWER_S = 60.0


@pytest.mark.parametrize("verdict", [Decision.APPROVE, Decision.REJECT])
async def test_a_held_call_has_an_approval_hold_span_with_its_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verdict: Decision
) -> None:
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    db = StateDB.open(tmp_path / "state")
    events = EventQueue(db)
    queue = ApprovalQueue(db, events)
    requested = anyio.Event()
    events.subscribe(lambda event: requested.set() if event.type == "approval_requested" else None)
    tracing = Tracing()
    spec = stdio_spec("gated", tool_approval=ToolApproval(tools={"write_note": "prompt"}, timeout_ms=60_000))  # type: ignore[arg-type]
    box: list[Any] = []
    with otlp_receiver() as receiver:
        tracing.configure(TraceConfig(endpoint=receiver.url))
        telemetry = CallTelemetry([CallSpans(tracing)])
        async with Supervisor(settings=replace(FAST, telemetry=telemetry)) as supervisor:
            supervisor.tool_gate = ToolCallApprovals(queue, progress_every=0.2)
            await supervisor.ensure("gated", spec, config_hash="h", base_dir=tmp_path)
            await supervisor.wait_until("gated", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
            endpoint = await supervisor.expose(guard())
            async with authed(endpoint.url("gated"), mode="auto") as client, anyio.create_task_group() as tg:

                async def call() -> None:
                    box.append(await client.call_tool("write_note", {"title": "plan"}))

                tg.start_soon(call)
                with anyio.fail_after(ANSWER_S):
                    await requested.wait()
                (pending,) = queue.find(kind=ApprovalKind.TOOL)
                queue.respond(pending.id, verdict, by="operator", reason="test")
        tracing.shutdown()
        spans = receiver.spans()
    db.close()
    (server,) = [s for s in spans if s.kind == "SERVER" and s.name == "tools/call write_note"]
    (hold,) = [s for s in spans if s.name == "approval hold"]
    assert hold.kind == "INTERNAL" and hold.parent_span_id == server.span_id
    upstream = [s for s in spans if s.kind == "CLIENT" and s.parent_span_id == server.span_id]
    if verdict is Decision.APPROVE:
        assert hold.attributes["clawplane.approval.verdict"] == "approved"
        assert server.attributes["clawplane.outcome"] == "ok"
        assert len(upstream) == 1 and upstream[0].start_ns >= hold.end_ns  # forwarded once released
    else:
        assert hold.attributes["clawplane.approval.verdict"] == "refused"
        assert server.attributes["clawplane.outcome"] == "refused"
        assert upstream == []  # never written to the server
    assert box
