"""Longest test files first, so the suite does not end on one slow file while the other workers idle.

``tests/support/durations.json`` holds each test file's measured seconds (setup + call + teardown
of its tests) from a full run; files not in it count as ``UNKNOWN_S``.
``pytest_collection_modifyitems`` orders the files by that, longest first, keeping each file's
tests together and in their own order, and ``make test`` uses xdist's ``--dist loadfile --no-loadscope-reorder``
(without the flag xdist re-sorts files by their number of tests), which hands whole files to
workers in that order: the slow OpenClaw and supervisor files start at once,
short unit files fill the end, and a file's module-scoped fixtures are set up once. The file is a
scheduling hint, never a limit: a stale or missing entry changes only the order.
``make durations`` re-measures it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

DURATIONS = Path(__file__).with_name("durations.json")
RECORD_ENV = "CLAWPLANE_RECORD_DURATIONS"
UNKNOWN_S = 5.0
"""A new file's guess: above the median file, below the slow ones."""


def known() -> dict[str, float]:
    """The recorded seconds per test file (empty when the record is missing or unreadable)."""
    try:
        data = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def file_of(nodeid: str) -> str:
    """``tests/x/test_y.py`` of ``tests/x/test_y.py::test_z[param]``."""
    return nodeid.split("::", 1)[0]


def longest_first(items: list[pytest.Item]) -> None:
    """Order ``items`` by their file's recorded duration, longest first; a file's tests stay together."""
    seconds = known()
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(file_of(item.nodeid), index)
    items.sort(
        key=lambda item: (-seconds.get(file_of(item.nodeid), UNKNOWN_S), first_seen[file_of(item.nodeid)])
    )


class Recorder:
    """Adds up each file's test phases as the controller (or a lone process) receives them."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        where = file_of(report.nodeid)
        self.seconds[where] = self.seconds.get(where, 0.0) + report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):
            return  # a worker: the controller has every report and writes the file
        kept = {k: round(v, 1) for k, v in sorted(self.seconds.items())}
        self.target.write_text(json.dumps(kept, indent=0, sort_keys=True) + "\n", encoding="utf-8")


def configure(config: Any) -> None:
    """Register the recorder when ``CLAWPLANE_RECORD_DURATIONS`` names a file."""
    target = os.environ.get(RECORD_ENV)
    if target and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Recorder(Path(target)), "clawplane-durations")
