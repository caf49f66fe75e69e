"""Session-wide hooks: run order (tests/support/schedule.py), no subreaper bit left between tests."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterator

import pytest
from tests.support import schedule

_PR_SET_CHILD_SUBREAPER = 36


def pytest_configure(config: pytest.Config) -> None:
    schedule.configure(config)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Longest tests first (after every other hook has added its markers)."""
    schedule.longest_first(items)


@pytest.fixture(autouse=True)
def _not_a_subreaper_between_tests() -> Iterator[None]:
    """Undo the subreaper bit an in-process spawn sets, once its test ends.

    ``reaping.become_subreaper`` marks the process for good. In a pytest worker that outlives
    the test: a daemon a later test starts through the CLI would be reparented to the worker,
    which never waits for it, and stay a zombie after it exits (``pid_exists`` true for ever).
    """
    yield
    reaping = sys.modules.get("clawplane.runtimes.process.reaping")  # imported only by tests that spawn
    if sys.platform == "linux" and reaping is not None and getattr(reaping, "_subreaper", None):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        reaping._subreaper = None
