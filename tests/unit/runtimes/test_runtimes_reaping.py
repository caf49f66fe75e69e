"""Reaping: the subreaper bit, process-group scans and collecting exited orphans."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from clawplane.runtimes.process import reaping


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


def test_a_tree_is_found_without_reading_the_whole_process_table(monkeypatch: pytest.MonkeyPatch) -> None:
    # psutil finds children by reading every process's stat: per server per liveness check, that
    # is quadratic in a supervisor's servers. The kernel's per-task children lists are not.
    if not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"):
        pytest.skip("this kernel does not list children in /proc")
    tree = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60 & wait"], start_new_session=True)
    try:
        expected = wait_for_children(tree.pid, 2)

        def whole_table(*_args: object, **_kwargs: object) -> None:
            raise AssertionError("the whole process table was read")

        monkeypatch.setattr(psutil, "_ppid_map", whole_table)
        monkeypatch.setattr(psutil, "process_iter", whole_table)
        assert {p.pid for p in reaping.tree_of(tree.pid)} == expected
        assert tree.pid in {p.pid for p in reaping.children()}
        assert {p.pid for p in reaping.tree_of(os.getpid())} >= {tree.pid, *expected}
    finally:
        os.killpg(tree.pid, 9)
        tree.wait()


def wait_for_children(pid: int, count: int) -> set[int]:
    """The children of ``pid`` once it has ``count`` (the shell forks them after it starts)."""
    for _ in range(600):
        found = {p.pid for p in psutil.Process(pid).children()}
        if len(found) >= count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{pid} never had {count} children")


def test_group_lookups_share_one_scan_of_the_process_table(monkeypatch: pytest.MonkeyPatch) -> None:
    scans: list[int] = []
    real = psutil.process_iter

    def counting(*args: object, **kwargs: object) -> object:
        scans.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(psutil, "process_iter", counting)
    monkeypatch.setattr(reaping, "GROUP_SCAN_TTL_S", 3600.0)  # no scan ages out during the test
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    first = subprocess.Popen(sleeper, start_new_session=True)
    try:
        assert [p.pid for p in reaping.group_members(first.pid)] == [first.pid]
        assert [p.pid for p in reaping.group_members(first.pid)] == [first.pid]
        assert len(scans) == 1  # a thousand servers' teardowns do not each read the whole table
        second = subprocess.Popen(sleeper, start_new_session=True)
        try:  # a group the last scan did not see is looked for afresh
            assert [p.pid for p in reaping.group_members(second.pid)] == [second.pid]
            assert len(scans) == 2
        finally:
            second.kill()
            second.wait()
        first.kill()
        first.wait()
        assert reaping.group_members(first.pid) == []  # gone members are not answered from the scan
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
