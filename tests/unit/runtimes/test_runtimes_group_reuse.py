"""Teardown never signals a process group that is no longer the server's (its pid was reused).

asyncio's child watcher reaps a server in a thread of its own and sets ``returncode`` later, on
the loop; in between, the server's pid, and so its process group id, is free, and with pid_max at
32768 a new session leader may hold it within minutes. The test makes that state directly: the
server record's pid is pointed at another real process group (a stand-in for the one that
reused the pid), with the server's own identity, and ``returncode`` still unset.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import anyio
import pytest

from clawplane.runtimes.process import child as process

pytestmark = pytest.mark.anyio
SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
# SIGTERM blocked: a signal sent to it stays pending, where /proc shows it at once (no waiting).
BLOCKING = "import signal, sys, time; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); print('ready', flush=True); time.sleep(60)"


def pending(pid: int) -> set[signal.Signals]:
    """The signals sent to ``pid`` and not yet delivered (its shared pending set)."""
    for line in open(f"/proc/{pid}/status").read().splitlines():  # noqa: SIM115
        if line.startswith("ShdPnd:"):
            mask = int(line.split()[1], 16)
            return {signal.Signals(n) for n in range(1, 65) if mask & (1 << (n - 1)) and n in signal.Signals._value2member_map_}
    raise AssertionError(f"no ShdPnd line for {pid}")


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A process group of its own that clawplane never started, with SIGTERM blocked."""
    proc = subprocess.Popen([sys.executable, "-c", BLOCKING], start_new_session=True, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        yield proc
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


async def test_a_group_id_held_by_another_process_is_not_signalled(bystander: subprocess.Popen[bytes]) -> None:
    async with await anyio.open_process(SLEEPER, start_new_session=True) as proc:
        server = process.ServerProcess(proc, label="reused")
        try:
            assert server._holds_group()
            server.pid = server.pgid = bystander.pid  # the pid now belongs to someone else
            assert server.returncode is None and not server._holds_group()
            server._signal_tree(signal.SIGTERM)
            assert signal.SIGTERM not in pending(bystander.pid), "teardown signalled a group it did not start"
            assert bystander.poll() is None
        finally:
            process._LIVE.pop(proc.pid, None)
            process._LIVE.pop(bystander.pid, None)
            server.close()
            proc.kill()


async def test_the_servers_own_group_is_signalled() -> None:
    async with await anyio.open_process(SLEEPER, start_new_session=True) as proc:
        server = process.ServerProcess(proc, label="own")
        try:
            server._signal_tree(signal.SIGTERM)
            with anyio.fail_after(10):
                assert await proc.wait() == -signal.SIGTERM
        finally:
            process._LIVE.pop(proc.pid, None)
            server.close()
