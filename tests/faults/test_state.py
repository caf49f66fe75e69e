"""Issue item 6: the state cannot diverge silently.

A database deleted or replaced under a running supervisor is noticed and reopened (every
apply used to fail with "run plan again"); a truncated database is moved aside with a
message instead of silently becoming a fresh one; an apply a kill -9 interrupted is closed
as ``interrupted`` on the next start.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys

import psutil
from tests.faults.conftest import CLI_S, World, kill9, wait_for


def _outcomes(world: World) -> list[str]:
    db = sqlite3.connect(world.state / "state.db")
    try:
        return [r[0] for r in db.execute("SELECT outcome FROM audit ORDER BY id")]
    finally:
        db.close()


def test_a_database_deleted_or_replaced_while_running_is_noticed_and_reopened(world: World) -> None:
    world.server("one", env={"GREETING": "a"})
    world.apply()
    pid = world.wait_ready(["one"])["McpServer/one"]["pid"]
    backup = world.root / "old.db"
    shutil.copy(world.state / "state.db", backup)
    for suffix in ("", "-wal", "-shm"):
        (world.state / f"state.db{suffix}").unlink(missing_ok=True)
    world.apply()  # used to fail for ever: CLI and supervisor were on different files
    assert world.wait_ready(["one"])["McpServer/one"]["pid"] == pid  # nothing restarted
    assert world.plan_is_empty()
    assert "while the supervisor ran; reopened it" in (world.state / "supervisor.log").read_text()

    world.server("one", env={"GREETING": "b"})
    world.apply()
    shutil.copy(backup, world.state / "state.tmp")
    (world.state / "state.tmp").replace(world.state / "state.db")  # an old copy swapped in
    world.apply()
    assert world.plan_is_empty()
    assert world.environ_of(world.wait_ready(["one"])["McpServer/one"]["pid"])["GREETING"] == "b"
    world.finish(["one"])


def test_a_truncated_database_is_moved_aside_with_a_message(world: World) -> None:
    world.server("one")
    world.apply()
    world.wait_ready(["one"])
    sup = world.supervisor()
    world.ok("down", str(world.folder))
    if sup is not None:  # its last checkpoint must not land after the cut
        psutil.wait_procs([sup], timeout=CLI_S)
    db = world.state / "state.db"
    size = db.stat().st_size
    with open(db, "r+b") as fh:
        fh.truncate(size // 2)
    proc = world.cli("apply", str(world.folder), "--yes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "was corrupt" in proc.stderr and "moved it to" in proc.stderr
    aside = list(world.state.glob("state.db.corrupt-*"))
    assert len(aside) == 1 and aside[0].stat().st_size == size // 2
    world.finish(["one"])


def test_an_apply_interrupted_by_kill9_is_closed_as_interrupted(world: World) -> None:
    world.server("slow", delay=600)
    apply = subprocess.Popen(
        [sys.executable, "-m", "clawplane", "apply", str(world.folder), "--yes"],
        env=world.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_for("the apply to be recorded", lambda: (world.state / "state.db").exists() and "running" in _outcomes(world))
    kill9(wait_for("the supervisor", world.supervisor))
    world.outputs.append(apply.communicate(timeout=120)[0])
    (world.folder / "slow.yaml").unlink()
    world.server("quick")
    world.apply()
    outcomes = _outcomes(world)
    assert outcomes[0] == "interrupted" and "running" not in outcomes, outcomes
    world.finish(["quick"])
