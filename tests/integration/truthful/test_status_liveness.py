"""`clawplane status` says what runs now: a dead supervisor means Stopped, counters are live."""

from __future__ import annotations

import os
import re
import signal

from tests.integration.runloop.conftest import wait_for
from tests.integration.truthful.conftest import Folder


def test_after_kill_9_and_after_down_the_hosted_server_is_stopped(folder: Folder) -> None:
    assert folder.cli("apply", str(folder.path), "--yes").returncode == 0
    notes = folder.resource("McpServer/notes")
    assert notes["phase"] == "Ready" and notes["pid"]
    pid = folder.supervisor_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_for("the supervisor to be gone", lambda: not any(f"run {folder.path}" in c for c in folder.alive()))

    doc = folder.status()
    assert doc["supervisor"]["running"] is False and doc["supervisor"]["lastPid"] == pid
    notes = next(r for r in doc["resources"] if r["key"] == "McpServer/notes")
    assert notes["phase"] == "Stopped" and notes["pid"] is None and notes["lastSeenAt"]
    ready = next(c for c in notes["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and ready["reason"] == "SupervisorStopped"
    text = folder.cli("status", str(folder.path)).stdout
    assert f"supervisor: stopped (pid {pid} is gone" in text
    assert re.search(r"McpServer\s+notes\s+Stopped\s+False", text), text

    assert folder.cli("down", str(folder.path)).returncode == 0
    notes = folder.resource("McpServer/notes")
    assert notes["phase"] == "Stopped" and notes["stoppedAt"]
    assert "stopped at " in folder.cli("status", str(folder.path)).stdout


def test_restart_counter_follows_the_back_offs_of_an_apply_started_supervisor(folder: Folder) -> None:
    folder.add_broken_server()
    assert folder.cli("apply", str(folder.path), "--yes").returncode == 1

    def backoffs() -> int:
        return folder.log().count("MCP server broken: restart-scheduled")

    wait_for("three back-offs", lambda: backoffs() >= 3, timeout=60)
    before = backoffs()
    broken = folder.settled("McpServer/broken", "Backoff")
    after = backoffs()
    # The counter is read live from the supervisor, not from the apply that started it.
    assert before <= broken["restarts"] <= after, (before, broken["restarts"], after)
    assert broken["phase"] == "Backoff" and broken["pid"] is None


def test_a_running_server_shows_its_live_pid(folder: Folder) -> None:
    assert folder.cli("apply", str(folder.path), "--yes").returncode == 0
    pid = folder.resource("McpServer/notes")["pid"]
    os.kill(pid, signal.SIGKILL)  # the supervisor restarts it: status must show the new process
    wait_for(
        "a new notes process",
        lambda: (r := folder.resource("McpServer/notes"))["phase"] == "Ready" and r["pid"] not in (None, pid),
    )
    assert folder.resource("McpServer/notes")["restarts"] == 1
