"""Test helper processes that announce their port: ``READY <port>`` on stdout, then serve.

``read_ready(proc, timeout)`` waits (bounded, no polling) for that line and returns it;
``stop_group(proc)`` ends the process group the caller started it in
(``start_new_session=True``): SIGTERM, then SIGKILL if it lingers.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time


def read_ready(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """The first line ``proc`` printed within ``timeout`` seconds (``b""`` or partial if none)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    line = b""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                break
            chunk = os.read(proc.stdout.fileno(), 256)
            if not chunk:
                break
            line += chunk
    return line


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop the process's own group (it was started in a new session by us)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    if proc.stdout is not None:
        proc.stdout.close()
