"""Issue item 3: the supervisor owns exactly its processes, and forgets none of them.

Every spawned process is recorded before it settles, by identity (pid, start time, boot);
a record that now names a stranger (pid reuse) is dropped without a signal; descendants that
detach with ``setsid`` die with their server; a forged pidfile is never trusted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from tests.faults.conftest import World, alive, kill9, wait_for


def _pid_of(world: World, name: str) -> int:
    return int(world.resources()[f"McpServer/{name}"]["pid"])


def test_kill9_of_the_supervisor_before_a_server_settles_leaves_nothing_behind(world: World) -> None:
    world.server("slow", delay=600)  # never settles while this test runs
    world.server("quick")
    foreign = world.start_foreign()
    apply = subprocess.Popen(
        [sys.executable, "-m", "clawplane", "apply", str(world.folder), "--yes"],
        env=world.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_for("the slow server to be spawned", lambda: len(world.servers()) == 2)
    supervisor = wait_for("the supervisor", world.supervisor)
    kill9(supervisor)
    out, _ = apply.communicate(timeout=120)
    world.outputs.append(out)
    # The fault: the unsettled server outlives its supervisor (one that reads stdin may exit on EOF).
    assert world.servers(), "nothing outlived the supervisor: the fault was not injected"
    world.ok("down", str(world.folder))
    assert world.tagged() == [], "down left processes of the killed supervisor"
    assert alive(foreign)
    (world.folder / "slow.yaml").unlink()
    world.apply()
    world.finish(["quick"])


def test_no_watch_supervisor_tracks_restarts_so_a_second_apply_never_runs_two_copies(world: World) -> None:
    world.server("one")
    world.apply()
    first = world.wait_ready(["one"])["McpServer/one"]["pid"]
    kill9(psutil.Process(first))
    restarted = wait_for(
        "the restart to be recorded",
        lambda: (pid := world.observed()["McpServer/one"].get("pid")) not in (None, first) and pid,
    )
    assert restarted in world.servers()
    kill9(wait_for("the supervisor", world.supervisor))
    world.apply()
    world.finish(["one"])
    assert len(world.servers()) == 1


@pytest.mark.parametrize("cgroups", ["on", "off"])
def test_a_crash_looping_server_leaks_no_setsid_grandchildren(world: World, cgroups: str) -> None:
    world.server("looper", grandchild=1, crash=1)
    world.server("steady", grandchild=1)
    env = {"CLAWPLANE_CGROUPS": cgroups}
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "0.5", env=env)
    world.wait_ready(["steady"])

    def restarted_a_few_times() -> bool:
        r = world.observed().get("McpServer/looper", {})
        return int(r.get("restarts") or 0) >= 3

    wait_for("the crash loop", restarted_a_few_times)
    grandchildren = [p for p in world.tagged() if "grandchild" in p.cmdline()]
    # The steady server's grandchild, plus at most the one of the looper's current attempt.
    assert len(grandchildren) <= 2, [p.cmdline() for p in grandchildren]
    (world.folder / "looper.yaml").unlink()
    wait_for("the looper to be deleted", lambda: "McpServer/looper" not in world.observed())
    steady = world.wait_ready(["steady"])["McpServer/steady"]["pid"]
    world.check_orphans(allowed={steady})
    world.ok("down", str(world.folder))
    assert world.tagged() == [], [p.cmdline() for p in world.tagged()]
    world.check_canaries()


def test_a_state_row_pointing_at_a_foreign_process_group_is_never_signalled(world: World) -> None:
    world.server("one")
    world.apply()
    pid = world.wait_ready(["one"])["McpServer/one"]["pid"]
    kill9(wait_for("the supervisor", world.supervisor))
    kill9(psutil.Process(pid))
    foreign = world.start_foreign()
    # PID reuse: the records now name a process group that is someone else's.
    db = sqlite3.connect(world.state / "state.db")
    with db:
        db.execute("UPDATE processes SET pid=?, pgid=?", (foreign.pid, foreign.pid))
        db.execute("UPDATE runtimes SET pid=?, pgid=?", (foreign.pid, foreign.pid))
    db.close()
    world.apply()
    assert alive(foreign), "a foreign process group was killed"
    world.finish(["one"])


def test_a_pidfile_that_is_not_ours_is_never_trusted(world: World) -> None:
    world.server("one")
    world.apply()
    world.wait_ready(["one"])
    foreign = world.start_foreign()
    pidfile = world.state / "supervisor.pid"
    real = json.loads(pidfile.read_text())
    forged = {**real, "pid": foreign.pid, "start": psutil.Process(foreign.pid).create_time()}
    # Writable by others: whatever it says is ignored.
    pidfile.write_text(json.dumps(forged))
    os.chmod(pidfile, 0o666)
    proc = world.cli("down", str(world.folder))
    assert alive(foreign), "down killed the process a forged pidfile named"
    assert "no supervisor is running" in proc.stdout
    # The real supervisor still answers its socket; restore its pidfile and stop it properly.
    pidfile.write_text(json.dumps(real))
    os.chmod(pidfile, 0o600)
    world.finish(["one"])
    world.ok("down", str(world.folder))
    assert world.tagged() == []


def test_leftovers_ignoring_sigterm_are_ended_in_parallel_after_the_socket_answers(world: World) -> None:
    names = [f"s{i:02d}" for i in range(15)]
    for name in names:
        world.server(name, ignore_term=1)
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "5")
    old = {r["pid"] for r in world.wait_ready(names, timeout=300).values() if r.get("pid")}
    kill9(wait_for("the supervisor", world.supervisor))
    assert old <= set(world.servers())  # 15 leftovers that ignore SIGTERM
    # Sequential 3 s waits before the socket would need 45 s: `run --detach` waits only 30 s.
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "5")
    world.wait_ready(names, timeout=300)
    assert not old & set(world.servers())
    world.finish(names)


def test_down_does_not_clean_up_while_a_supervisor_holds_the_folder(world: World, tmp_path: Path) -> None:
    world.server("one")
    world.apply()
    world.wait_ready(["one"])
    # Hide the pidfile: down cannot reach the supervisor, and must not kill what it owns.
    (world.state / "supervisor.pid").rename(tmp_path / "hidden.pid")
    world.cli("down", str(world.folder))
    (tmp_path / "hidden.pid").rename(world.state / "supervisor.pid")
    world.finish(["one"])
