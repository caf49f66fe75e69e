"""No process outlives a command that did not mean to start it; `run` takes over from `apply`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.integration.engine.conftest import ROOT
from tests.integration.runloop.conftest import wait_for
from tests.integration.truthful.conftest import Folder

from clawplane.workspace.control import request


def _nothing_runs(folder: Folder) -> None:
    assert folder.alive() == [], folder.alive()
    assert not (folder.state / "supervisor.pid").exists()


def test_an_apply_answered_no_at_the_prompt_leaves_nothing_running(folder: Folder) -> None:
    leader, follower = os.openpty()  # stdin is a terminal, so apply asks
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawplane", "apply", str(folder.path)],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=folder.cli.env,
    )
    os.close(follower)
    os.write(leader, b"n\n")  # the terminal keeps the answer until the prompt reads it
    try:
        out, err = proc.communicate(timeout=180)
    finally:
        os.close(leader)
    assert proc.returncode == 1, out + err
    assert "Apply cancelled; nothing was changed." in out
    _nothing_runs(folder)


def test_an_apply_refused_without_yes_leaves_nothing_running(folder: Folder) -> None:
    proc = folder.cli("apply", str(folder.path))
    assert proc.returncode == 1 and "refusing to apply without confirmation" in proc.stdout
    _nothing_runs(folder)


def test_an_apply_refused_as_a_mass_delete_leaves_nothing_running(folder: Folder) -> None:
    assert folder.cli("apply", str(folder.path), "--yes").returncode == 0
    assert folder.cli("down", str(folder.path)).returncode == 0
    for name in ("agents.yaml", "channels.yaml", "skills.yaml", "mcp-servers.yaml"):
        (folder.path / name).unlink()
    proc = folder.cli("apply", str(folder.path), "--yes")
    assert proc.returncode == 1 and "--allow-mass-delete" in proc.stdout
    _nothing_runs(folder)


def test_make_demo_on_a_crashing_folder_fails_and_tears_down(folder: Folder) -> None:
    folder.add_broken_server()
    proc = subprocess.run(
        # -o setup: the venv running this test is the one the demo uses; do not reinstall it.
        ["make", "-C", str(ROOT), "-o", "setup", "-o", ".venv/.clawplane-installed", "demo", f"DEMO={folder.path}"],
        capture_output=True,
        text=True,
        env=folder.cli.env,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode != 0, proc.stdout
    assert "ModuleNotFoundError" in proc.stdout and "supervisor stopped" in proc.stdout
    _nothing_runs(folder)


def _watching(folder: Folder) -> bool:
    async def ask() -> bool:
        socket = json.loads((folder.state / "supervisor.pid").read_text())["socket"]
        async for event in request(Path(socket), {"op": "ping"}):
            if event.get("final"):
                return bool(event.get("watching"))
        return False

    import anyio

    return anyio.run(ask)


def test_run_detach_takes_over_from_an_apply_started_supervisor(folder: Folder) -> None:
    assert folder.cli("apply", str(folder.path), "--yes").returncode == 0
    old = folder.supervisor_pid()
    assert old is not None and not _watching(folder)
    proc = folder.cli("run", str(folder.path), "--detach")
    assert proc.returncode == 0, proc.stdout
    assert f"taking over from the supervisor `clawplane apply` started (pid {old}" in proc.stdout
    new = folder.supervisor_pid()
    assert new not in (None, old) and _watching(folder)
    assert not any(f"--state-dir {folder.state} " in c and str(old) in c for c in folder.alive())
    wait_for("the new supervisor's servers", lambda: folder.resource("McpServer/notes")["phase"] == "Ready")
    again = folder.cli("run", str(folder.path), "--detach")
    assert again.returncode == 0 and f"supervisor already running (pid {new}, watching" in again.stdout


def test_a_foreground_run_beside_a_watching_supervisor_says_how_to_replace_it(folder: Folder) -> None:
    assert folder.cli("run", str(folder.path), "--detach").returncode == 0
    pid = folder.supervisor_pid()
    proc = folder.cli("run", str(folder.path), timeout=60)
    assert proc.returncode == 1
    assert f"a supervisor already watches this folder (pid {pid})" in proc.stdout
    assert f"clawplane down {folder.path}" in proc.stdout
