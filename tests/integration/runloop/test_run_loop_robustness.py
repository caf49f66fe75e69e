"""The loop under pressure: bursts of saves coalesce; a killed ``clawplane run`` leaves no orphans."""

from __future__ import annotations

import os
import signal

import psutil
from tests.integration.runloop.conftest import Loop, http_get, wait_for


def test_a_burst_of_edits_coalesces_into_few_reconciles(looping: Loop) -> None:
    before = looping.pids()
    start = looping.reconciles()
    path = looping.folder / "mcp-servers.yaml"
    original = path.read_text()
    for i in range(100):
        path.write_text(original.replace("hello from clawplane", f"hello number {i}"))
    looping.wait_settled(after=start)
    wait_for(
        "the plan to be empty",
        lambda: looping.cli("plan", str(looping.folder), "--detailed-exitcode").returncode == 0,
    )
    passes = looping.reconciles() - start
    assert passes <= 15, passes
    after = looping.pids()
    assert after["McpServer/notes"] != before["McpServer/notes"]
    assert after["McpServer/notes-two"] == before["McpServer/notes-two"]
    assert looping.status()["McpServer/notes"]["phase"] == "Ready"


def _servers(loop: Loop) -> list[psutil.Process]:
    """Live notes servers started in ``loop``'s folder (their command line is relative)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd", "status"]):
        try:
            if (
                proc.info["status"] != psutil.STATUS_ZOMBIE
                and proc.info["cwd"] == str(loop.folder)
                and "notes_server" in " ".join(proc.info["cmdline"] or [])
            ):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def test_killing_the_supervisor_and_starting_again_leaves_no_orphans(looping: Loop) -> None:
    old = looping.pids()
    supervisor = looping.info()["pid"]
    os.kill(supervisor, signal.SIGKILL)
    wait_for("the supervisor to die", lambda: not psutil.pid_exists(supervisor) or
             psutil.Process(supervisor).status() == psutil.STATUS_ZOMBIE)  # fmt: skip
    started = looping.cli("run", str(looping.folder), "--detach", "--resync-interval", "2")
    assert started.returncode == 0, started.stdout + started.stderr
    wait_for("a new supervisor", lambda: looping.info()["pid"] != supervisor)
    wait_for(
        "the new supervisor to be ready", lambda: http_get(looping.info()["metrics"] + "/readyz")[0] == 200
    )
    looping.wait_settled()
    new = looping.pids()
    assert set(new) == set(old)
    assert all(pid and pid not in old.values() for pid in new.values() if pid)
    for pid in filter(None, old.values()):
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    running = {p.pid for p in _servers(looping)}
    assert running == {pid for pid in new.values() if pid}, (running, new)
