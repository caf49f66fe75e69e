"""Issue item 8: the watch loop at its edges.

A symlink loop named ``*.yaml`` is a diagnostic, not a traceback; a folder that is a symlink
swapped by git-sync is followed; a file cut at a ``---`` mid-write deletes nothing; a server
stopped with SIGSTOP is noticed although nobody calls it; a port in use is named.
"""

from __future__ import annotations

import json
import os
import signal
import socket

import psutil
from tests.faults.conftest import World, alive, server_doc, wait_for


def _last_result(world: World) -> object:
    try:
        doc = json.loads((world.state / "loop.json").read_text())
    except (OSError, ValueError):
        return None
    return (doc.get("lastReconcile") or {}).get("result")


def _loop(world: World) -> dict[str, object]:
    return dict(world.status().get("loop") or {})


def test_a_symlink_loop_is_a_diagnostic_and_the_folder_reads_invalid(world: World) -> None:
    world.server("one")
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "0.5")
    pid = world.wait_ready(["one"])["McpServer/one"]["pid"]
    os.symlink("loop.yaml", world.folder / "loop.yaml")
    proc = world.cli("validate", str(world.folder))
    assert proc.returncode == 1 and "input.symlink-loop" in proc.stdout, proc.stdout + proc.stderr
    wait_for("the loop to report the folder invalid", lambda: _loop(world).get("folderValid") is False)
    assert "Traceback" not in (world.state / "supervisor.log").read_text()
    assert world.resources()["McpServer/one"]["pid"] == pid  # the last good state stays
    (world.folder / "loop.yaml").unlink()
    wait_for("the folder to be valid again", lambda: _loop(world).get("folderValid") is True)
    world.finish(["one"])


def test_a_folder_symlink_swapped_to_a_new_revision_is_followed(world: World) -> None:
    revisions = world.root / "revisions"
    for rev, greeting in (("rev1", "first"), ("rev2", "second")):
        (revisions / rev).mkdir(parents=True)
        doc = json.loads(server_doc("one", world.tag, env={"GREETING": greeting}))
        (revisions / rev / "one.yaml").write_text(json.dumps(doc))
    link = world.root / "current"
    os.symlink(revisions / "rev1", link)
    state = world.root / "state"
    world.ok("run", str(link), "--detach", "--resync-interval", "30", "--state-dir", str(state))
    world.folder.rmdir()
    world.folder.symlink_to(link)  # the world's own view of the folder follows the link too

    def pid_with(greeting: str) -> int | None:
        for proc in world.servers().values():
            if world.environ_of(proc.pid).get("GREETING") == greeting:
                return proc.pid
        return None

    first = wait_for("rev1's server", lambda: pid_with("first"))
    tmp = world.root / "current.tmp"
    os.symlink(revisions / "rev2", tmp)
    tmp.replace(link)  # git-sync's atomic swap
    second = wait_for("rev2's server", lambda: pid_with("second"), timeout=60)
    assert not alive(psutil.Process(first)) if psutil.pid_exists(first) else True
    assert second != first
    world.ok("down", str(link), "--state-dir", str(state))
    assert world.tagged() == []
    world.check_canaries()


def test_a_file_cut_at_a_document_boundary_deletes_nothing(world: World) -> None:
    both = server_doc("one", world.tag) + "\n---\n" + server_doc("two", world.tag)
    path = world.write("servers.yaml", both)
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "30")
    pids = {r["key"]: r["pid"] for r in world.wait_ready(["one", "two"]).values() if r.get("pid")}
    path.write_text(server_doc("one", world.tag) + "\n---\n")  # the writer got this far
    # loop.json, not `status`: the loop waits 2 s, and a CLI call on a loaded box can take that.
    wait_for("the loop to wait for the folder to settle", lambda: _last_result(world) == "settling")
    path.write_text(both)  # and then finished
    wait_for("the loop to settle", lambda: (_loop(world).get("lastReconcile") or {}).get("result") == "unchanged")
    after = {r["key"]: r["pid"] for r in world.wait_ready(["one", "two"]).values() if r.get("pid")}
    assert after == pids, "a half-written file deleted and recreated a server"
    path.write_text(server_doc("one", world.tag))  # a real delete still happens, once settled
    wait_for("two to be deleted", lambda: "McpServer/two" not in world.observed())
    world.finish(["one"])


def test_a_stopped_idle_server_is_detected_and_restarted(world: World) -> None:
    world.server("one")
    world.ok("run", str(world.folder), "--detach", "--resync-interval", "0.5", "--ping-interval", "0.5")
    pid = world.wait_ready(["one"])["McpServer/one"]["pid"]
    os.kill(pid, signal.SIGSTOP)
    restarted = wait_for(
        "a new server process",
        lambda: (r := world.observed()["McpServer/one"]).get("phase") == "Ready" and r.get("pid") not in (None, pid) and r,
    )
    assert int(restarted.get("restarts") or 0) >= 1
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    world.finish(["one"])


def test_a_port_in_use_is_an_error_naming_it(world: World) -> None:
    world.server("one")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        for flag in ("--metrics-port", "--port"):
            proc = world.cli("run", str(world.folder), flag, str(port))
            text = proc.stdout + proc.stderr
            assert proc.returncode == 1, text
            assert f"127.0.0.1:{port}" in text and flag in text, text
            assert "ExceptionGroup" not in text
    finally:
        taken.close()
    world.check_foreign()
    world.check_orphans(allowed=set())
