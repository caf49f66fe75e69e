"""Tests of the test-side harness itself: the conformance fixture server and the token forwarder."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """The fixture's HTTP side and the forwarder run uvicorn, which needs asyncio."""
    return "asyncio"
