"""Session-wide hooks: run order (tests/support/schedule.py)."""

from __future__ import annotations

import pytest
from tests.support import schedule


def pytest_configure(config: pytest.Config) -> None:
    schedule.configure(config)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Longest tests first (after every other hook has added its markers)."""
    schedule.longest_first(items)
