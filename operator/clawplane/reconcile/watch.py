"""Folder watching for ``clawplane run`` (the only module that imports ``watchfiles``).

``watch_folder`` calls ``on_change`` once per debounced batch of file changes under the
resource folder; the state directory and the output directory are ignored, so the
supervisor's own writes never wake it up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
from watchfiles import DefaultFilter, awatch

DEBOUNCE_MS = 200
STEP_MS = 50


async def watch_folder(
    folder: Path,
    on_change: Callable[[set[str]], None],
    *,
    ignore: Sequence[Path] = (),
    stop: anyio.Event,
    debounce_ms: int = DEBOUNCE_MS,
) -> None:
    """Report changed paths under ``folder`` until ``stop`` is set."""
    watch_filter = DefaultFilter(ignore_paths=[str(p) for p in ignore])
    async for changes in awatch(
        folder,
        watch_filter=watch_filter,
        stop_event=stop,
        debounce=debounce_ms,
        step=STEP_MS,
        yield_on_timeout=False,
    ):
        if changes:
            on_change({path for _, path in changes})
