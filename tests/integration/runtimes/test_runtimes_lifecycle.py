"""Runtime lifecycles with real processes: crashes, backoff, hangs, pauses, list changes, teardown."""

from __future__ import annotations

import os
import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from tests.fixtures.servers.helpers import FAST, START_TIMEOUT, live, settings, stdio_spec, tree

from clawplane.runtimes import (
    EventKind,
    Phase,
    RequestFailedError,
    RequestTimeoutError,
    RuntimeEvent,
    RuntimeStatus,
    ServerPausedError,
    Supervisor,
    ToolKind,
)

pytestmark = pytest.mark.anyio


def ready(status: RuntimeStatus) -> bool:
    return status.phase is Phase.READY


def tool_names(supervisor: Supervisor, server: str) -> set[str]:
    return {e.tool for e in supervisor.catalog([server]) if e.kind is ToolKind.TOOL}


async def test_crashed_process_is_restarted_and_reported(tmp_path: Path) -> None:
    events: list[RuntimeEvent] = []
    async with Supervisor(settings=FAST, on_event=events.append) as supervisor:
        await supervisor.ensure("crashy", stdio_spec("crashing"), config_hash="h", base_dir=tmp_path)
        first = await supervisor.wait_until("crashy", ready, timeout=START_TIMEOUT)
        with pytest.raises(RequestFailedError):
            await supervisor.call_tool("crashy", "crash", {"code": 3})
        second = await supervisor.wait_until(
            "crashy", lambda s: ready(s) and s.restarts == first.restarts + 1, timeout=START_TIMEOUT
        )
        assert (await supervisor.call_tool("crashy", "echo", {"message": "back"})).text == "echo: back"

    assert second.pid != first.pid and second.exit_code == 3
    assert live([first.pid]) == []
    crashed = [e for e in events if e.kind is EventKind.CRASHED]
    # The exit code, and the server's last stderr line as its cause.
    assert [e.message for e in crashed] == ["process exited with code 3: crashing with exit code 3"]
    assert [e.delay for e in events if e.kind is EventKind.RESTART_SCHEDULED] == [0.05]


async def test_restart_backoff_doubles_up_to_the_cap(tmp_path: Path) -> None:
    counter = tmp_path / "crash-count"
    counter.write_text("5", encoding="utf-8")
    events: list[RuntimeEvent] = []
    spec = stdio_spec("crashing", "--crash-on-start", str(counter))
    async with Supervisor(settings=settings(restart_backoff_max=0.4), on_event=events.append) as supervisor:
        await supervisor.ensure("flaky", spec, config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_until("flaky", ready, timeout=START_TIMEOUT * 2)

    delays = [e.delay for e in events if e.kind is EventKind.RESTART_SCHEDULED]
    assert delays == [0.05, 0.1, 0.2, 0.4, 0.4]
    assert status.restarts == 5 and status.last_error is None
    failures = [e.message for e in events if e.kind is EventKind.START_FAILED]
    assert len(failures) == 5 and all("exited with code 17" in m for m in failures)


async def test_server_hanging_on_initialize_blocks_no_other_server(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        hang = stdio_spec("hanging", connection_timeout_ms=600_000)
        await supervisor.ensure("hang", hang, config_hash="h", base_dir=tmp_path)
        await supervisor.ensure("normal", stdio_spec("normal"), config_hash="h", base_dir=tmp_path)
        await supervisor.wait_until("normal", ready, timeout=START_TIMEOUT)
        assert supervisor.status("hang").phase is Phase.STARTING
        assert (await supervisor.call_tool("normal", "add", {"a": 1, "b": 2})).text == "3"


async def test_initialize_timeout_names_the_limit_and_retries(tmp_path: Path) -> None:
    events: list[RuntimeEvent] = []
    async with Supervisor(settings=FAST, on_event=events.append) as supervisor:
        hang = stdio_spec("hanging", connection_timeout_ms=1500)
        await supervisor.ensure("hang", hang, config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_until("hang", lambda s: s.restarts >= 1, timeout=START_TIMEOUT)
        pid = supervisor.status("hang").pid
    assert status.last_error == 'MCP server "hang" timed out: did not complete initialize within 1.5s'
    assert EventKind.START_FAILED in [e.kind for e in events]
    assert pid is None or live([pid]) == []


async def test_three_failed_requests_pause_the_server_until_a_named_time(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("failing", stdio_spec("normal"), config_hash="h", base_dir=tmp_path)
        await supervisor.wait_until("failing", ready, timeout=START_TIMEOUT)
        for _ in range(2):
            with pytest.raises(RequestFailedError, match=r"boom \(code -32000\)"):
                await supervisor.call_tool("failing", "fail")
        # A success in between resets the streak.
        await supervisor.call_tool("failing", "echo", {"message": "ok"})
        assert supervisor.status("failing").consecutive_failures == 0
        before = datetime.now(UTC)
        for _ in range(3):
            with pytest.raises(RequestFailedError):
                await supervisor.call_tool("failing", "fail")
        status = supervisor.status("failing")
        assert status.paused_until is not None and status.consecutive_failures == 3
        with pytest.raises(ServerPausedError) as paused:
            await supervisor.call_tool("failing", "echo", {"message": "refused"})
        after = datetime.now(UTC)

    retry_at = paused.value.retry_at
    # Paused for 60 s from the third failure, which happened between `before` and `after`.
    assert before + timedelta(seconds=60) <= retry_at <= after + timedelta(seconds=60)
    stamp = retry_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert str(paused.value) == (
        f'MCP server "failing" is paused after repeated tool failures; retry after {stamp}'
    )


async def test_repeated_request_timeouts_recycle_the_process(tmp_path: Path) -> None:
    events: list[RuntimeEvent] = []
    spec = stdio_spec("normal", request_timeout_ms=1000)
    async with Supervisor(settings=FAST, on_event=events.append) as supervisor:
        await supervisor.ensure("slow", spec, config_hash="h", base_dir=tmp_path)
        first = await supervisor.wait_until("slow", ready, timeout=START_TIMEOUT)
        for _ in range(3):
            with pytest.raises(RequestTimeoutError, match=r"timed out after 1s"):
                await supervisor.call_tool("slow", "slow", {"seconds": 3600})
        second = await supervisor.wait_until(
            "slow", lambda s: ready(s) and s.restarts == first.restarts + 1, timeout=START_TIMEOUT
        )
    assert second.pid != first.pid and second.paused_until is None
    assert EventKind.RECYCLED in [e.kind for e in events]
    # A recycle restarts at once, without backoff.
    assert [e.delay for e in events if e.kind is EventKind.RESTART_SCHEDULED][-1] == 0.0


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_tools_list_changed_refreshes_the_catalog_in_both_eras(tmp_path: Path, era: str) -> None:
    args = ("--legacy",) if era != "2026-07-28" else ()
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("changing", stdio_spec("changing", *args), config_hash="h", base_dir=tmp_path)
        status = await supervisor.wait_until("changing", ready, timeout=START_TIMEOUT)
        assert status.protocol_version == era and "extra" not in tool_names(supervisor, "changing")

        await supervisor.call_tool("changing", "add_tool", {"name": "extra"})
        await supervisor.wait_until("changing", lambda s: s.tool_count == status.tool_count + 1, timeout=30)
        assert "extra" in tool_names(supervisor, "changing")
        assert (await supervisor.call_tool("changing", "extra")).text == "extra"

        await supervisor.call_tool("changing", "remove_tool", {"name": "echo"})
        await supervisor.wait_until("changing", lambda s: s.tool_count == status.tool_count, timeout=30)
        assert "echo" not in tool_names(supervisor, "changing")


async def test_config_hash_change_restarts_and_same_hash_does_not(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("svc", stdio_spec("normal"), config_hash="v1", base_dir=tmp_path)
        first = await supervisor.wait_until("svc", ready, timeout=START_TIMEOUT)
        same = await supervisor.ensure(
            "svc", stdio_spec("normal"), config_hash="v1", base_dir=tmp_path, safe_name="s"
        )
        assert same.pid == first.pid and same.safe_name == "s"

        old_tree = tree(first.pid or 0)
        await supervisor.ensure(
            "svc", stdio_spec("normal", "--name", "v2"), config_hash="v2", base_dir=tmp_path
        )
        assert live(old_tree) == []
        second = await supervisor.wait_until("svc", ready, timeout=START_TIMEOUT)
    assert (second.config_hash, second.server_name, second.restarts) == ("v2", "v2", 0)


@pytest.mark.parametrize("detach", ["0", "1"])
async def test_no_process_of_a_removed_runtime_survives(tmp_path: Path, detach: str) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure(
            "family", stdio_spec("grandchild", "--detach", detach), config_hash="h", base_dir=tmp_path
        )
        status = await supervisor.wait_until("family", ready, timeout=START_TIMEOUT)
        grandchild = int((await supervisor.call_tool("family", "grandchild_pid")).text)
        assert status.pid is not None and live([status.pid, grandchild]) == [status.pid, grandchild]
        family = tree(status.pid) | {grandchild}

        with anyio.fail_after(20):  # bounded: stdin grace + SIGTERM grace + kill wait
            await supervisor.remove("family")
        assert live(family) == []
        assert supervisor.names() == []


async def test_supervisor_shutdown_tears_every_tree_down(tmp_path: Path) -> None:
    pids: set[int] = set()
    async with Supervisor(settings=FAST) as supervisor:
        for name in ("a", "b"):
            await supervisor.ensure(name, stdio_spec("grandchild"), config_hash="h", base_dir=tmp_path)
        for name in ("a", "b"):
            status = await supervisor.wait_until(name, ready, timeout=START_TIMEOUT)
            pids |= tree(status.pid or 0) | {int((await supervisor.call_tool(name, "grandchild_pid")).text)}
        await supervisor.ensure(
            "hang", stdio_spec("hanging", connection_timeout_ms=600_000), config_hash="h", base_dir=tmp_path
        )
        hang_pid = supervisor.status("hang").pid
        pids |= tree(hang_pid) if hang_pid else set()
    assert len(pids) >= 4 and live(pids) == []


async def test_crash_of_a_server_leaves_no_grandchild_behind(tmp_path: Path) -> None:
    async with Supervisor(settings=FAST) as supervisor:
        await supervisor.ensure("family", stdio_spec("grandchild"), config_hash="h", base_dir=tmp_path)
        first = await supervisor.wait_until("family", ready, timeout=START_TIMEOUT)
        grandchild = int((await supervisor.call_tool("family", "grandchild_pid")).text)
        assert first.pid is not None
        os.kill(first.pid, signal.SIGKILL)
        second = await supervisor.wait_until(
            "family", lambda s: ready(s) and s.restarts == first.restarts + 1, timeout=START_TIMEOUT
        )
        assert live([first.pid, grandchild]) == []
        assert second.exit_code == -9


async def test_an_exit_noticed_before_end_of_output_still_counts_as_a_crash(tmp_path: Path) -> None:
    # The grandchild keeps the server's stdout open, so only the exit watcher sees the death:
    # the session it cancels had been ready, and that must not be reported as a failed start.
    events: list[RuntimeEvent] = []
    async with Supervisor(settings=FAST, on_event=events.append) as supervisor:
        await supervisor.ensure("gc", stdio_spec("grandchild"), config_hash="h", base_dir=tmp_path)
        first = await supervisor.wait_until("gc", ready, timeout=START_TIMEOUT)
        assert first.pid is not None
        os.kill(first.pid, signal.SIGKILL)
        await supervisor.wait_until(
            "gc", lambda s: ready(s) and s.restarts == first.restarts + 1, timeout=START_TIMEOUT
        )
    kinds = [e.kind for e in events]
    assert EventKind.START_FAILED not in kinds, [(e.kind, e.message) for e in events]
    crashed = [e.message for e in events if e.kind is EventKind.CRASHED]
    assert len(crashed) == 1 and crashed[0].startswith("process was killed by signal 9"), crashed


async def test_a_session_being_torn_down_is_not_reported_ready(tmp_path: Path) -> None:
    # A stopped process ignores its closed stdin; with a long grace its teardown takes as long
    # as the test wants, and status must not say Ready meanwhile (CI saw Ready with no pid).
    slow = settings(ping_interval=0.2, ping_timeout=10.0, stdin_close_grace=120.0)
    async with Supervisor(settings=slow) as supervisor:
        await supervisor.ensure("one", stdio_spec("normal"), config_hash="h", base_dir=tmp_path)
        first = await supervisor.wait_until("one", ready, timeout=START_TIMEOUT)
        assert first.pid is not None
        os.kill(first.pid, signal.SIGSTOP)
        try:
            ending = await supervisor.wait_until("one", lambda s: not ready(s), timeout=START_TIMEOUT)
            assert live([first.pid]) == [first.pid], "the phase changed only after the teardown"
            assert ending.phase is Phase.BACKOFF and ending.restarts == first.restarts
        finally:
            os.kill(first.pid, signal.SIGCONT)  # it reads the closed stdin and exits
        second = await supervisor.wait_until("one", ready, timeout=START_TIMEOUT)
    assert second.pid != first.pid and second.restarts == first.restarts + 1
