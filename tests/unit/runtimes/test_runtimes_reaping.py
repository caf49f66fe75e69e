"""Reaping: the subreaper bit, process-group scans and collecting exited orphans."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil

from clawplane.runtimes import reaping


def test_supervisor_process_can_become_a_subreaper() -> None:
    assert reaping.become_subreaper() is (sys.platform == "linux")


def test_group_members_and_trees_are_found() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        assert [p.pid for p in reaping.group_members(child.pid)] == [child.pid]
        assert child.pid in {p.pid for p in reaping.tree_of(os.getpid())}
        assert reaping.running(psutil.Process(child.pid))
    finally:
        child.kill()
        child.wait()


def test_exited_children_nobody_waits_for_are_reaped() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    # Block until it has exited, without collecting it: it is now a zombie.
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    others = {p.pid for p in psutil.Process().children() if p.pid != child.pid}
    proc = psutil.Process(child.pid)
    assert reaping.exists(proc) and not reaping.running(proc)

    assert reaping.reap_orphans(keep=others) == [child.pid]
    assert not reaping.exists(proc)
