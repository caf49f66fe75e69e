"""Fixtures shared by unit tests of several layers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from clawplane._utils.changefeed import ChangeFeed, open_feed


@pytest.fixture
def feed() -> Iterator[ChangeFeed]:
    """A change feed, closed after the test (the tests that use it need Linux inotify)."""
    opened = open_feed()
    assert opened is not None
    yield opened
    opened.close()
