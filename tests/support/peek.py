"""A folder's status document read in the test process, for polling.

Tests that wait for a supervisor to bring something about poll its status many times. Each
``clawplane status --json`` is a new interpreter that imports the CLI (about 0.4 CPU-s here),
so a wait polled through the CLI kept a core busy and slowed the very supervisor it waited
for. This reads the same document the command prints (``reconcile.statusview``) without a
process; the tests still check the command itself wherever they assert what a user sees.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from clawplane.reconcile.statusview import folder_status
from clawplane.state import StateError
from clawplane.workspace import Workspace


def status_text(folder: Path) -> str | None:
    """What ``clawplane status FOLDER --json`` would print now; ``None`` where it would fail."""
    try:
        doc = anyio.run(folder_status, Workspace.for_folder(folder))
    except StateError:
        return None
    doc["folder"] = str(folder)
    return json.dumps(doc)


def by_key(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A status document's resources by key (``McpServer/notes``)."""
    return {r["key"]: r for r in doc["resources"]}
