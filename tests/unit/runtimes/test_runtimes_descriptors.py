"""A spawned server's pidfd is closed however its context ends (the soak bench found a leak)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import anyio
import pytest

from clawplane.runtimes.process.child import Teardown, open_process
from clawplane.runtimes.process.stderr import StderrLog

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def _pidfds() -> int:
    """The pidfds this process holds now."""
    found = 0
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
            found += os.readlink(fd) == "anon_inode:[pidfd]"
    return found


class Boom(Exception):
    """The caller's own failure while it used the process."""


async def _serve_then(ending: str) -> None:
    async with open_process(
        SLEEPER,
        env={"PATH": os.environ["PATH"]},
        cwd=None,
        stderr_log=StderrLog("t", max_line_bytes=1024, history=10),
        teardown=Teardown(0.1, 0.1, 2.0),
        label="t",
        use_cgroup=False,
    ):
        if ending == "error":
            raise Boom
        if ending == "cancel":
            await anyio.sleep(60)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds are Linux-only")
@pytest.mark.parametrize("ending", ["normal", "error", "cancel"])
@pytest.mark.anyio
async def test_the_pidfd_is_closed_however_the_context_ends(ending: str) -> None:
    before = _pidfds()
    for _ in range(5):
        if ending == "error":
            with pytest.raises(BaseException) as raised:
                await _serve_then(ending)
            assert (
                raised.group_contains(Boom)
                if isinstance(raised.value, BaseExceptionGroup)
                else raised.type is Boom
            )
        elif ending == "cancel":
            with anyio.move_on_after(0.5):
                await _serve_then(ending)
        else:
            await _serve_then(ending)
    assert _pidfds() == before
