"""Finding 6 of issue 35: a ``kill -9`` of the supervisor must not orphan a server or its helpers.

The server fixture (``stubborn_server``) ignores SIGTERM and the end of stdin, starts a
``setsid`` child before serving and, on a tool call, a helper by double fork that is in no
process tree the supervisor looked at. After a ``kill -9`` of the supervisor they all run on
(re-parented to init). The next ``apply`` must end every one of them before it plans (so it
never says "No changes" while they run), start the server again, and leave ``status`` and the
hosted endpoint true. With cgroups (``on``) the old generation is found in its cgroups, without
(``off``) by the records and by the mark in its environment. A process that is not provably the
old generation's (a reused pid, another user's, another mark) is never signalled.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.faults.conftest import ROOT, START_S, World, alive, kill9, wait_for

from clawplane._utils.identity import boot_id, identify

STUBBORN_SERVER = ROOT / "tests" / "fixtures" / "servers" / "stubborn_server.py"
MARK = "CLAWPLANE_MARK"


def _stubborn(world: World, name: str) -> None:
    doc = {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": name},
        "spec": {
            "command": sys.executable,
            "args": [str(STUBBORN_SERVER), "--tag", world.tag],
            "connectionTimeoutMs": int(START_S * 1000),
        },
    }
    world.write(f"{name}.yaml", json.dumps(doc))


def _call(world: World, server: str, tool: str) -> str:
    """Call ``tool`` of ``server`` on the hosted endpoint, as OpenClaw would (its rendered URL and token)."""
    entry = json.loads((world.state / "out" / "openclaw.json").read_text())["mcp"]["servers"][server]

    async def go() -> str:
        http = httpx2.AsyncClient(
            headers={"Authorization": entry["headers"]["Authorization"]}, timeout=START_S
        )
        async with Client(streamable_http_client(entry["url"], http_client=http), mode="auto") as client:
            result = await client.call_tool(tool, {})
        assert not result.is_error, result
        return "".join(getattr(c, "text", "") for c in result.content)

    return anyio.run(go)


def _with_mark(mark: str) -> list[psutil.Process]:
    """Every live process whose environment carries ``mark`` (read as root reads any process)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(MARK) == mark and alive(proc):
                found.append(proc)
        except psutil.Error:
            continue
    return found


@pytest.mark.parametrize("cgroups", ["on", "off"])
def test_kill_9_of_the_supervisor_leaves_no_orphans(world: World, cgroups: str) -> None:
    env = {"CLAWPLANE_CGROUPS": cgroups}
    _stubborn(world, "stubborn")
    world.apply(env)
    world.wait_ready(["stubborn"])
    daemon = int(_call(world, "stubborn", "detach_daemon"))
    old = world.tagged()
    assert daemon in {p.pid for p in old} and len(old) == 3, [p.cmdline() for p in old]
    marks = {world.environ_of(p.pid).get(MARK) for p in old}

    kill9(wait_for("the supervisor", world.supervisor))
    assert all(alive(p) for p in old), "nothing outlived the supervisor: the fault was not injected"
    out = world.apply(env)

    assert "No changes" not in out, f"apply found nothing to do while the old generation ran:\n{out}"
    survivors = [(p.pid, p.cmdline()[-2:]) for p in old if alive(p)]
    assert not survivors, f"processes of the killed supervisor survived the next apply: {survivors}"
    assert len(marks) == 1 and None not in marks, f"the old generation carried no single mark: {marks}"
    assert _with_mark(marks.pop() or "") == []
    world.finish(["stubborn"])
    helper = psutil.Process(int(_call(world, "stubborn", "grandchild_pid")))
    assert helper not in old and alive(helper)  # the new generation's, by pid and start time
    world.ok("down", str(world.folder))
    assert world.tagged() == []
    # Stopped cleanly with nothing left: the next start has no dead supervisor to search for.
    assert json.loads(_meta(world).get("supervisor_generations") or "[]") == []


def _insert_record(world: World, pid: int, start: int, supervisor: int, label: str) -> None:
    db = sqlite3.connect(world.state / "state.db")
    with db:
        db.execute(
            "INSERT INTO processes VALUES (?,?,?,?,?,?,?,?,?)",
            (pid, start, boot_id(), label, pid, None, "[]", supervisor, "2026-01-01T00:00:00Z"),
        )
    db.close()


def _foreign(world: World, env: dict[str, str], *, as_user: list[str] | None = None) -> psutil.Process:
    """A process that the first wrong signal ends (SIGTERM, or the SIGKILL after it)."""
    code = "import time; time.sleep(3600)"
    raw = subprocess.Popen(
        [*(as_user or []), "/usr/bin/python3", "-c", code, "foreign-" + world.tag],
        env=env,
        start_new_session=True,
        stdin=subprocess.DEVNULL,
    )
    proc = psutil.Process(raw.pid)
    world.foreign.append(proc)
    wait_for("the foreign process to run", lambda: proc.cmdline()[-1:] == ["foreign-" + world.tag])
    return proc


def test_kill_9_of_the_supervisor_never_signals_what_it_cannot_prove_its_own(world: World) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None or not Path("/usr/bin/python3").exists():
        pytest.skip("needs root, setpriv and /usr/bin/python3 to run a process as another user")
    _stubborn(world, "stubborn")
    world.apply({"CLAWPLANE_CGROUPS": "off"})
    world.wait_ready(["stubborn"])
    old = world.tagged()
    mark = world.environ_of(old[0].pid).get(MARK, "no-mark-on-this-build")
    supervisor = wait_for("the supervisor", world.supervisor)
    kill9(supervisor)
    # A stranger that holds a recorded pid with the very start time the record names (pid reuse
    # at the worst moment): pid, start and boot match, but it carries no mark of ours.
    reused = _foreign(world, {"PATH": os.environ["PATH"]})
    ident = identify(reused.pid)
    assert ident is not None
    _insert_record(world, reused.pid, ident.start, supervisor.pid, "stubborn")
    _insert_record(world, reused.pid, ident.start - 1, supervisor.pid, "stubborn")  # plain pid reuse
    # Another user's process that somehow carries our mark: the owner does not match.
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    stolen = _foreign(world, {"PATH": os.environ["PATH"], MARK: mark}, as_user=nobody)
    # Our own user's process with another mark (another folder's supervisor, say).
    other = _foreign(world, {"PATH": os.environ["PATH"], MARK: "0" * 32})

    out = world.apply({"CLAWPLANE_CGROUPS": "off"})

    for proc, what in (
        (reused, "the reused pid"),
        (stolen, "another user's process"),
        (other, "another mark"),
    ):
        assert alive(proc), f"{what} (pid {proc.pid}) was signalled"
    assert "No changes" not in out
    assert not [p for p in old if alive(p)], "the old generation survived"
    world.finish(["stubborn"])


def _meta(world: World) -> dict[str, Any]:
    db = sqlite3.connect(world.state / "state.db")
    db.row_factory = sqlite3.Row
    try:
        return {r["key"]: r["value"] for r in db.execute("SELECT key, value FROM meta")}
    finally:
        db.close()


def test_kill_9_of_the_supervisor_down_ends_the_leftovers_too(world: World) -> None:
    _stubborn(world, "stubborn")
    world.apply({"CLAWPLANE_CGROUPS": "off"})
    world.wait_ready(["stubborn"])
    daemon = int(_call(world, "stubborn", "detach_daemon"))
    old = world.tagged()
    assert daemon in {p.pid for p in old} and len(old) == 3, [p.cmdline() for p in old]
    kill9(wait_for("the supervisor", world.supervisor))
    out = world.ok("down", str(world.folder))
    assert "stopped leftover runtime stubborn" in out
    assert not [p for p in old if alive(p)], "down left processes of the killed supervisor"
    assert json.loads(_meta(world).get("supervisor_generations") or "[]") == []
    world.check_foreign()
    world.check_canaries()


def test_kill_9_cleanup_never_ends_the_servers_of_a_supervisor_that_still_runs(
    world: World, tmp_path: Path
) -> None:
    # A state database copied from a folder whose supervisor runs (a backup restored into a
    # second folder): it names that supervisor's processes, which are not the copy's to end.
    _stubborn(world, "stubborn")
    world.apply()
    world.wait_ready(["stubborn"])
    original = world.tagged()
    copy = tmp_path / "copy"
    shutil.copytree(world.folder, copy, ignore=shutil.ignore_patterns(".clawplane"))
    (copy / ".clawplane").mkdir(mode=0o700)
    source = sqlite3.connect(world.state / "state.db")
    target = sqlite3.connect(copy / ".clawplane" / "state.db")
    with target:
        source.backup(target)
    source.close()
    target.close()
    os.chmod(copy / ".clawplane" / "state.db", 0o600)
    try:
        out = world.ok("apply", str(copy), "--yes")
        assert "No changes" not in out
        killed = [(p.pid, p.cmdline()[-2:]) for p in original if not alive(p)]
        assert not killed, f"the copy's supervisor ended the original folder's processes: {killed}"
    finally:
        world.cli("down", str(copy))
    assert all(alive(p) for p in original)
    world.finish(["stubborn"])
