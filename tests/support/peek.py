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
from clawplane.reconcile.workspace import Workspace
from clawplane.state import StateError


def status_document(folder: Path, *, state_dir: Path | None = None) -> dict[str, Any] | None:
    """What ``clawplane status FOLDER --json`` would print now; ``None`` where it would fail."""
    ws = Workspace.for_folder(folder, state_dir=state_dir)
    try:
        doc = anyio.run(folder_status, ws)
    except StateError:
        return None
    doc["folder"] = str(folder)
    return dict(json.loads(json.dumps(doc)))  # exactly the types the command prints
