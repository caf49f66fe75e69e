"""Every request through the hosted endpoint is counted and timed, by server, method, tool and outcome.

Real MCP clients (both protocol eras) call a real stdio fixture server through the proxy; the
metrics are read back with ``prometheus_client``'s own exposition parser, as Prometheus reads
them. Label values stay bounded whatever tool names a client makes up.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, TOKEN, authed, guard, stdio_spec
from tests.support import rawsessions as raw

from clawplane.runtimes import Phase, Supervisor
from clawplane.telemetry import CallMetrics, CallRecord, CallSeries, CallTelemetry, Outcome
from clawplane.telemetry.calls import Call

pytestmark = pytest.mark.anyio
HISTOGRAM = "clawplane_mcp_request_duration_seconds"


class Recorder:
    """A sink that keeps every finished record (what the audit trail and the charts are fed)."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []

    def begin(self, call: Call) -> None:
        pass

    def forwarded(self, call: Call) -> None:
        pass

    def held(self, call: Call) -> None:
        pass

    def released(self, call: Call, verdict: str) -> None:
        pass

    def finished(self, call: Call, record: CallRecord) -> None:
        self.records.append(record)


def samples(registry: CollectorRegistry, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """``name``'s samples, parsed from the exposition text, keyed by their sorted labels."""
    text = generate_latest(registry).decode()
    found: dict[tuple[tuple[str, str], ...], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                found[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def count(registry: CollectorRegistry, **labels: str) -> float:
    """The histogram's ``_count`` for exactly ``labels`` (0 when absent)."""
    return samples(registry, HISTOGRAM + "_count").get(tuple(sorted(labels.items())), 0.0)


async def start(supervisor: Supervisor, tmp_path: Path) -> None:
    await supervisor.ensure("proxy", stdio_spec("proxy"), config_hash="h", base_dir=tmp_path)
    await supervisor.wait_until("proxy", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_each_call_is_counted_once_with_its_outcome(tmp_path: Path, mode: str) -> None:
    registry, recorder, series = CollectorRegistry(), Recorder(), CallSeries()
    telemetry = CallTelemetry([CallMetrics(registry), series, recorder])
    async with Supervisor(settings=replace(FAST, telemetry=telemetry)) as supervisor:
        await start(supervisor, tmp_path)
        endpoint = await supervisor.expose(guard())
        async with authed(endpoint.url("proxy"), mode=mode) as client:
            for n in range(3):
                await client.call_tool("echo", {"message": f"m{n}"})
            failed = await client.call_tool("add", {"a": "not a number", "b": 1})  # the SDK: isError
            with pytest.raises(MCPError):
                await client.call_tool("fail", {"message": "tool says no"})
            with pytest.raises(MCPError):
                await client.call_tool("fail_with_data", {"message": "protocol says no"})
            await client.list_tools()

    assert failed.is_error
    hosted = {"endpoint": "hosted", "server": "proxy"}
    assert count(registry, **hosted, method="tools/call", tool="echo", outcome="ok") == 3
    assert count(registry, **hosted, method="tools/call", tool="add", outcome="tool_error") == 1
    assert count(registry, **hosted, method="tools/call", tool="fail", outcome="error") == 1
    assert count(registry, **hosted, method="tools/call", tool="fail_with_data", outcome="error") == 1
    assert count(registry, **hosted, method="tools/list", tool="", outcome="ok") >= 1
    errors = samples(registry, "clawplane_mcp_request_errors_total")
    assert errors == {
        (("code", "-32000"), ("method", "tools/call"), ("server", "proxy")): 1.0,
        (("code", "-32050"), ("method", "tools/call"), ("server", "proxy")): 1.0,
    }
    # Buckets are cumulative and end at the count.
    buckets = {
        float(dict(labels)["le"]): value
        for labels, value in samples(registry, HISTOGRAM + "_bucket").items()
        if ("tool", "echo") in labels
    }
    ordered = [buckets[le] for le in sorted(buckets)]
    assert ordered == sorted(ordered) and ordered[-1] == 3
    # The records carry who and where, never arguments.
    calls = [r for r in recorder.records if r.method == "tools/call"]
    assert [r.target for r in calls] == ["echo", "echo", "echo", "add", "fail", "fail_with_data"]
    assert [r.outcome for r in calls][-3:] == [Outcome.TOOL_ERROR, Outcome.ERROR, Outcome.ERROR]
    assert calls[-1].error_code == -32050 and calls[-1].error == "protocol says no"
    assert {r.consumer for r in calls} == {"test"}
    expected_revision = "2026-07-28" if mode == "auto" else "2025-11-25"
    assert {r.revision for r in calls} == {expected_revision}
    assert all(r.session for r in calls) if mode == "legacy" else all(r.session is None for r in calls)
    assert "m0" not in repr(recorder.records)
    # The charts' hour holds the same calls; the handshake of either era is not charted.
    handshake = "server/discover" if mode == "auto" else "initialize"
    assert handshake in {r.method for r in recorder.records}
    hour = series.hour("server", "proxy")
    charted = [r for r in recorder.records if r.method not in ("initialize", "server/discover")]
    assert sum(m.calls for m in hour) == len(charted)
    assert sum(m.errors for m in hour) == 3


async def test_made_up_tool_names_and_argument_values_do_not_become_labels(tmp_path: Path) -> None:
    registry = CollectorRegistry()
    telemetry = CallTelemetry([CallMetrics(registry)])
    async with Supervisor(settings=replace(FAST, telemetry=telemetry)) as supervisor:
        await start(supervisor, tmp_path)
        endpoint = await supervisor.expose(guard())
        async with authed(endpoint.url("proxy"), mode="auto") as client:
            for n in range(1000):
                result = await client.call_tool(f"made-up-{n}", {"value": n})
                assert result.is_error  # the server has no such tool
            for n in range(1000):  # 1,000 distinct argument values of a real tool
                await client.call_tool("echo", {"message": f"value-{n}"})
    series = samples(registry, HISTOGRAM + "_count")
    tools = {dict(labels)["tool"] for labels in series}
    assert tools <= {"", "_unknown", "echo"}
    assert sum(v for k, v in series.items() if dict(k)["tool"] == "_unknown") == 1000
    assert sum(v for k, v in series.items() if dict(k)["tool"] == "echo") == 1000
    assert len(series) <= 5  # handshake, listing, the unknown tools and echo: not one per value


async def test_open_sessions_and_refusals_at_the_limit_are_counted(tmp_path: Path) -> None:
    """A session in use cannot make room: the next one is refused, and counted as refused."""
    registry = CollectorRegistry()
    telemetry = CallTelemetry([CallMetrics(registry)])
    async with Supervisor(settings=replace(FAST, telemetry=telemetry)) as supervisor:
        await supervisor.ensure(
            "one", stdio_spec("proxy", max_sessions=1), config_hash="h", base_dir=tmp_path
        )
        await supervisor.wait_until("one", lambda s: s.phase is Phase.READY, timeout=START_TIMEOUT)
        endpoint = await supervisor.expose(guard())
        url = endpoint.url("one")
        async with raw.client() as http, contextlib.AsyncExitStack() as stack:
            session = await raw.open_session(http, url, TOKEN)
            await raw.hold(stack, http, url, TOKEN, session)
            held = samples(registry, "clawplane_mcp_sessions")
            refused = await raw.initialize(http, url, TOKEN)
        counted = samples(registry, "clawplane_mcp_session_refusals_total")

    assert refused.status_code == 503
    assert held == {(("endpoint", "hosted"), ("server", "one")): 1.0}
    assert counted == {(("endpoint", "hosted"), ("server", "one")): 1.0}
