"""Only processes carrying this process's mark count as orphans a server left behind.

A supervisor (or a test worker) may start session leaders of its own that are not servers: a
test's etcd and kube-apiserver are such children of the pytest worker. Taken for adopted
orphans, they were torn down with the next server (CI saw etcd "exit 0": reaped by the
teardown, so its Popen met ECHILD). Real processes, no mocks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from clawplane.runtimes.process import reaping
from clawplane.runtimes.process.marks import MARK_ENV, own_mark

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


@pytest.fixture
def children() -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """A session leader started without the mark, and one that carries this process's mark."""
    assert reaping.become_subreaper()
    plain_env = {k: v for k, v in os.environ.items() if k != MARK_ENV}
    started = {
        "unmarked": subprocess.Popen(SLEEPER, start_new_session=True, env=plain_env),
        "marked": subprocess.Popen(SLEEPER, start_new_session=True, env={**plain_env, MARK_ENV: own_mark()}),
    }
    try:
        yield started
    finally:
        for proc in started.values():
            proc.kill()
            proc.wait(10)


def test_an_unmarked_child_in_its_own_session_is_not_an_orphan_of_a_server(
    children: dict[str, subprocess.Popen[bytes]],
) -> None:
    adopted = {p.pid for p in reaping.adopted_orphans(set())}
    assert children["unmarked"].pid not in adopted
    assert children["marked"].pid in adopted
