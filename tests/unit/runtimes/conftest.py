"""Runtime unit tests run in-process servers on asyncio."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """The bridge embeds uvicorn, which needs asyncio."""
    return "asyncio"
