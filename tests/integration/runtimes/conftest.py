"""Integration tests of the MCP runtimes run real fixture servers as processes, on asyncio."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """The bridge embeds uvicorn, which needs asyncio."""
    return "asyncio"
