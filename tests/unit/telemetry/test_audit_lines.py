"""The audit trail as JSON lines (``clawplane bridge --audit-log``): a row of ``clawplane audit --jsonl``.

Each line is checked against what a real SQLite state database gives back for the same record
(``write_calls`` then ``iter_calls``, the code ``clawplane audit --jsonl`` prints from); the sink's
writer thread writes to a real pipe-like stream. A fresh interpreter shows that a bridge with
traces off loads none of the OpenTelemetry SDK.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from clawplane.secrets import KNOWN
from clawplane.state import StateDB
from clawplane.state.calllines import AuditLines
from clawplane.state.calltrail import CallFilter, Retention, call_document, iter_calls, write_calls
from clawplane.telemetry import CallRecord, CallSite, CallTelemetry, Outcome

SECRET = "lines-secret-7Hd2Kq9Z"
RECORD = CallRecord(
    at=time.time() - 5, duration_s=0.0125, endpoint="hosted", server="notes", consumer="bridge", agent=None,
    session="s-1", revision="2025-11-25", method="tools/call", target="search", outcome=Outcome.ERROR,
    error_code=-32000, error=f"refused {SECRET}", bytes_in=120, bytes_out=0, held_s=0.25,
)  # fmt: skip


def test_a_line_holds_what_audit_jsonl_prints_for_the_same_call(tmp_path: Path) -> None:
    KNOWN.add(SECRET)
    db = StateDB.open(tmp_path)
    try:
        write_calls(db, [RECORD], Retention(1000, 30))
        (row,) = list(iter_calls(db, CallFilter(limit=None)))
    finally:
        db.close()
    del row["id"]
    assert call_document(RECORD) == row
    assert row["error"] == "refused <redacted>"


def test_the_sink_writes_finished_tool_calls_only_and_hands_them_to_the_export() -> None:
    stream = io.StringIO()
    exported: list[CallRecord] = []

    def export(records: Sequence[CallRecord]) -> None:
        exported.extend(records)

    lines = AuditLines(stream, export)
    telemetry = CallTelemetry([lines])
    site = CallSite(endpoint="hosted", server="notes", consumer="bridge")
    for msg in (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"a": SECRET}}},
    ):
        call = telemetry.begin(site, msg)
        assert call is not None
        call.finish({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": []}})
    lines.close()
    written = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(d["event"], d["tool"], d["outcome"], d["consumer"]) for d in written] == [
        ("clawplane.tool_call", "echo", "ok", "bridge")
    ]
    assert [r.target for r in exported] == ["echo"]
    assert SECRET not in stream.getvalue()  # arguments are never written


def test_a_bridge_without_traces_loads_no_opentelemetry_sdk() -> None:
    code = """
import io, sys
from clawplane.cli.bridgetraces import TraceFlags, bridge_trace_config
from clawplane.runtimes.bridgetelemetry import BridgeTelemetry
from clawplane.telemetry import CallTelemetry
assert bridge_trace_config(TraceFlags(), {"PATH": "/bin"}, SystemExit) is None
found = BridgeTelemetry.attach(CallTelemetry(), trace=None, audit_log=io.StringIO(), export_logs=False)
found.close()
print(sorted(m for m in sys.modules if m.startswith("opentelemetry.sdk")))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
