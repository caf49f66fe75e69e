"""Private copies of ``examples/quickstart`` for tests that drive clawplane with it.

The copy's notes server runs on ``stdio_lite`` (``tests/fixtures/servers/notes_lite_server.py``):
the same tools and answers as the example's SDK server (``test_stdio_lite`` holds them to it)
without importing the SDK, which cost ~1 CPU-s per start and the suite starts it ~150 times.
Tests about the example server itself (the getting-started steps, ``make demo``, real clients against
the hosted endpoint) pass ``example_server=True`` and run the file users run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"
SERVERS = ROOT / "tests" / "fixtures" / "servers"
LITE_FILES = ("stdio_lite.py", "fixture_args.py")
"""What a copied stdio_lite fixture imports, copied beside it."""


def copy_quickstart(dest: Path, *, example_server: bool = False) -> Path:
    """Copy the quickstart (without ``.clawplane``) to ``dest``; returns ``dest``."""
    shutil.copytree(QUICKSTART, dest, ignore=shutil.ignore_patterns(".clawplane"))
    if not example_server:
        copy_fixture("notes_lite", dest / "servers", as_name="notes_server.py")
    return dest


def copy_fixture(name: str, folder: Path, *, as_name: str | None = None) -> Path:
    """Copy fixture ``name`` (``<name>_server.py``) and the stdio_lite modules it imports into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for module in LITE_FILES:
        shutil.copy(SERVERS / module, folder / module)
    target = folder / (as_name or f"{name}_server.py")
    shutil.copy(SERVERS / f"{name}_server.py", target)
    return target
