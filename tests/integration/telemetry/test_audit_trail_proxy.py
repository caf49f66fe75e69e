"""Every tool call through the real proxy is one row of the audit trail, with no secret in it.

Real MCP clients (both protocol eras) call a real stdio fixture server through the hosted
endpoint; the ``CallAuditor`` writes to a real state database on its own thread. A secret the
server was given and echoes into its error is redacted; an argument is never stored. A flood
while another connection holds the database locked shows the proxy never waits for the trail:
every call is a row or counted as not recorded. With ``exportLogs`` the same calls reach a real
OTLP/HTTP receiver as log records.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, authed, guard, stdio_spec
from tests.support.otlp_logs_receiver import logs_receiver

from clawplane.models import AuditSettings
from clawplane.runtimes import Phase, Supervisor
from clawplane.state import StateDB
from clawplane.state.callaudit import CallAuditor
from clawplane.state.calltrail import CallFilter, find_calls, unrecorded
from clawplane.telemetry import Call, CallRecord, CallTelemetry
from clawplane.telemetry.logexport import EVENT_NAME, CallLogExport

pytestmark = pytest.mark.anyio
SECRET = "sk-audit-canary-4f7d2a9c"
ARGUMENT = "argument-canary-81be03"


class Forwarded:
    """A sink that says when a call was written to the server (to cancel it then, not before)."""

    def __init__(self) -> None:
        self.event = anyio.Event()

    def begin(self, call: Call) -> None:
        pass

    def forwarded(self, call: Call) -> None:
        if call.target == "slow":
            self.event.set()

    def held(self, call: Call) -> None:
        pass

    def released(self, call: Call, verdict: str) -> None:
        pass

    def finished(self, call: Call, record: CallRecord) -> None:
        pass


async def wait_rows(state: Path, n: int, timeout: float = 30) -> list[dict[str, Any]]:
    """The trail's rows once there are ``n`` (polled with a deadline)."""
    deadline = time.monotonic() + timeout
    while True:
        db = StateDB.open(state, create=False)
        try:
            rows = find_calls(db, CallFilter(limit=10_000))
        finally:
            db.close()
        if len(rows) >= n or time.monotonic() > deadline:
            return rows
        await anyio.sleep(0.05)


async def make_calls(url: str, mode: str, forwarded: Forwarded) -> None:
    """ok, tool_error, error (quoting the secret), an unknown tool, and a call cancelled in flight."""
    async with authed(url, mode=mode) as client:
        await client.call_tool("echo", {"message": ARGUMENT})
        assert (await client.call_tool("add", {"a": "not a number", "b": 1})).is_error
        with pytest.raises(MCPError):
            await client.call_tool("fail", {"message": f"token {SECRET} was refused"})
        assert (await client.call_tool("no_such_tool", {"x": ARGUMENT})).is_error
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: client.call_tool("slow", {"seconds": 120}))
                with anyio.fail_after(30):
                    await forwarded.event.wait()
                scope.cancel()
        await client.call_tool("echo", {"message": "after"})  # the session still works


async def run_calls(tmp_path: Path, mode: str, auditor: CallAuditor) -> Path:
    """Start the fixture behind the proxy with the secret in its env, and make the calls."""
    forwarded = Forwarded()
    telemetry = CallTelemetry([auditor, forwarded])
    spec = stdio_spec("proxy", env={"TOKEN": {"valueFrom": {"env": "AUDIT_CANARY_SOURCE"}}})
    async with Supervisor(settings=replace(FAST, telemetry=telemetry)) as supervisor:
        await supervisor.ensure("proxy", spec, config_hash="h", base_dir=tmp_path)
        await supervisor.wait_until("proxy", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
        endpoint = await supervisor.expose(guard())
        await make_calls(endpoint.url("proxy"), mode, forwarded)
        rows = await wait_rows(tmp_path / ".clawplane", 6)
        assert len(rows) == 6, rows
    return tmp_path / ".clawplane"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_tool_call_is_recorded_once_with_its_outcome_and_no_secret(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIT_CANARY_SOURCE", SECRET)
    auditor = CallAuditor(tmp_path / ".clawplane")
    auditor.start()
    try:
        state = await run_calls(tmp_path, mode, auditor)
    finally:
        auditor.close()
    db = StateDB.open(state, create=False)
    rows = list(reversed(find_calls(db, CallFilter())))
    dump = json.dumps(db.dump())
    db.close()
    assert [(r["tool"], r["outcome"]) for r in rows] == [
        ("echo", "ok"),
        ("add", "tool_error"),
        ("fail", "error"),
        ("no_such_tool", "tool_error"),
        ("slow", "cancelled"),
        ("echo", "ok"),
    ]
    assert {(r["endpoint"], r["server"], r["consumer"], r["agent"]) for r in rows} == {
        ("hosted", "proxy", "test", None)
    }
    assert {r["revision"] for r in rows} == {"2026-07-28" if mode == "auto" else "2025-11-25"}
    failed = rows[2]
    assert (
        failed["errorCode"] == -32000 and "was refused" in failed["error"] and SECRET not in failed["error"]
    )
    assert all(r["bytesIn"] > 0 and r["durationMs"] > 0 for r in rows)
    assert SECRET not in dump and ARGUMENT not in dump
    for output in ("--jsonl", "--json", "--limit=50"):
        shown = subprocess.run(
            [sys.executable, "-m", "clawplane", "audit", str(tmp_path), "--state-dir", str(state), output],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        assert "slow" in shown.stdout
        assert SECRET not in shown.stdout + shown.stderr and ARGUMENT not in shown.stdout + shown.stderr


async def test_the_proxy_never_waits_for_the_trail(tmp_path: Path) -> None:
    """Another connection holds the database locked for the whole flood: the writer cannot write,
    its 8-slot queue overflows, and still every call is answered at once and accounted for."""
    state = tmp_path / ".clawplane"
    auditor = CallAuditor(state, queue_size=8, batch=4)
    auditor.start()
    blocker = sqlite3.connect(state / "state.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    calls, slowest = 1000, 0.0
    telemetry = CallTelemetry([auditor])
    try:
        async with Supervisor(settings=replace(FAST, telemetry=telemetry)) as supervisor:
            await supervisor.ensure("proxy", stdio_spec("proxy"), config_hash="h", base_dir=tmp_path)
            await supervisor.wait_until("proxy", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
            endpoint = await supervisor.expose(guard())
            async with authed(endpoint.url("proxy"), mode="auto") as client:
                for n in range(calls):
                    started = time.perf_counter()
                    await client.call_tool("echo", {"message": f"m{n}"})
                    slowest = max(slowest, time.perf_counter() - started)
        written_meanwhile = blocker.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0]
    finally:
        blocker.execute("COMMIT")
        blocker.close()
        auditor.close()
    db = StateDB.open(state, create=False)
    rows = db.query("SELECT COUNT(*) AS n FROM tool_calls")[0]["n"]
    missed = unrecorded(db)
    db.close()
    assert written_meanwhile == 0  # nothing could be written while the flood ran
    assert missed > 0 and rows + missed == calls
    assert slowest < 5.0, f"one call took {slowest:.2f}s"  # the writer waits up to 10 s for the lock


async def test_exported_as_otlp_log_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_CANARY_SOURCE", SECRET)
    with logs_receiver() as receiver:
        export = CallLogExport(f"{receiver.url}/v1/logs", service_name="audit-test", schedule_delay_ms=50)
        auditor = CallAuditor(tmp_path / ".clawplane")
        auditor.configure(AuditSettings(export_logs=True), export)
        auditor.start()
        try:
            await run_calls(tmp_path, "auto", auditor)
        finally:
            auditor.close()
            export.close()
        records = await anyio.to_thread.run_sync(lambda: receiver.wait_for(lambda seen: len(seen) >= 6))
    assert receiver.content_types == {"application/x-protobuf"}
    assert len(records) == 6
    assert [(r["attributes"]["gen_ai.tool.name"], r["attributes"]["clawplane.outcome"]) for r in records] == [
        ("echo", "ok"),
        ("add", "tool_error"),
        ("fail", "error"),
        ("no_such_tool", "tool_error"),
        ("slow", "cancelled"),
        ("echo", "ok"),
    ]
    first, failed = records[0], records[2]
    assert first["resource"]["service.name"] == "audit-test" and first["event_name"] == EVENT_NAME
    assert first["body"] == "tools/call proxy/echo: ok" and first["severity"] == "INFO"
    assert (
        first["attributes"]["clawplane.consumer"] == "test"
        and first["attributes"]["clawplane.endpoint"] == "hosted"
    )
    assert failed["severity"] == "ERROR" and failed["attributes"]["rpc.jsonrpc.error_code"] == -32000
    assert "was refused" in failed["attributes"]["error.message"]
    assert SECRET not in repr(records) and ARGUMENT not in repr(records)
    assert abs(first["time_ns"] / 1e9 - time.time()) < 600
