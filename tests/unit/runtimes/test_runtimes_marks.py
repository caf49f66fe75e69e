"""The mark in a spawned process's environment and the proof of ownership built on it (finding 6).

Real processes throughout: a spawned server carries its supervisor's mark (a declared variable
of that name cannot replace it), and a process is proven ours only by identity, real user and
mark together.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import anyio
import pytest

from clawplane._utils.identity import ProcessIdentity, identify
from clawplane.runtimes.process import marks
from clawplane.runtimes.process.child import Teardown, open_process
from clawplane.runtimes.process.stderr import StderrLog

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; killed afterwards."""
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait()


def _start(procs: list[subprocess.Popen[bytes]], env: dict[str, str]) -> ProcessIdentity:
    proc = subprocess.Popen(SLEEPER, env=env, start_new_session=True)
    procs.append(proc)
    ident = identify(proc.pid)
    assert ident is not None
    return ident


def _me() -> marks.Owned:
    me = identify(os.getpid())
    assert me is not None
    return marks.Owned(marks.own_mark(), os.getuid(), me.start)


def test_kill_9_a_process_is_proven_ours_by_identity_user_and_mark_together(
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    owner = _me()
    marked = _start(spawned, {marks.MARK_ENV: owner.mark})
    unmarked = _start(spawned, {})
    other = _start(spawned, {marks.MARK_ENV: "f" * 32})

    assert marks.mark_of(marked.pid) == owner.mark and marks.mark_of(unmarked.pid) == ""
    assert marks.owner_of(marked.pid) == os.getuid()
    assert marks.proven(marked, [owner])
    assert not marks.proven(unmarked, [owner]) and not marks.proven(other, [owner])
    # The same pid with another start time is another process (a reused pid).
    assert not marks.proven(ProcessIdentity(marked.pid, marked.start + 1, marked.boot), [owner])
    # Marked, but the owner recorded another user.
    assert not marks.proven(marked, [marks.Owned(owner.mark, os.getuid() + 1, owner.since)])
    assert not marks.proven(marked, [marks.Owned("", os.getuid(), owner.since)])  # no mark proves nothing

    found = set(marks.marked_processes([owner]))
    assert marked in found and unmarked not in found and other not in found
    # Started before the supervisor that owns the mark: not its process.
    later = marks.Owned(owner.mark, owner.uid, marked.start + 1)
    assert marked not in marks.marked_processes([later])


def test_kill_9_a_forked_child_makes_a_mark_of_its_own() -> None:
    mine = marks.own_mark()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its mark and leave without running the parent's cleanup
        os.write(write, marks.own_mark().encode())
        os._exit(0)
    os.close(write)
    theirs = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert theirs and theirs != mine and marks.own_mark() == mine


@pytest.mark.anyio
async def test_kill_9_every_spawned_process_carries_the_supervisors_mark() -> None:
    env = {"PATH": os.environ["PATH"], marks.MARK_ENV: "declared-by-the-resource"}
    async with open_process(
        SLEEPER,
        env=env,
        cwd=None,
        stderr_log=StderrLog("t", max_line_bytes=1024, history=10),
        teardown=Teardown(0.1, 0.1, 2.0),
        label="t",
    ) as proc:
        environ = await anyio.Path(f"/proc/{proc.pid}/environ").read_bytes()
        assert f"{marks.MARK_ENV}={marks.own_mark()}".encode() in environ.split(b"\0")
