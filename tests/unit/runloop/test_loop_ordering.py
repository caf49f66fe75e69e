"""A pass is on record before its "pass finished" event goes out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import anyio

from clawplane.events import Event, EventType
from clawplane.reconcile.engine import Engine
from clawplane.reconcile.loop import ReconcileLoop
from clawplane.reconcile.outcome import PassOutcome
from clawplane.state import StateDB, prepare_state_dir
from clawplane.workspace import LOOP_STATUS_FILE, Workspace


def test_loop_json_names_the_pass_when_its_finished_event_arrives(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    ws = Workspace.for_folder(folder)
    prepare_state_dir(ws.state_dir)
    db = StateDB.open(ws.state_dir)
    loop = ReconcileLoop(ws, db, cast(Any, None), Engine(ws), anyio.Lock())

    async def fake_pass(reason: str) -> PassOutcome:
        return PassOutcome.APPLIED

    loop._pass = fake_pass  # type: ignore[method-assign]  # the pass itself is not under test
    seen: list[tuple[str, Any]] = []

    def on_event(event: Event) -> None:
        if event.type == EventType.PASS_FINISHED:
            written = json.loads((ws.state_dir / LOOP_STATUS_FILE).read_text(encoding="utf-8"))
            seen.append((event.data["id"], written))

    loop.oversight.events.subscribe(on_event)
    anyio.run(loop.reconcile, "files changed")
    anyio.run(loop.reconcile, "files changed")
    assert len(seen) == 2
    for rid, written in seen:
        assert json.dumps(written).count(rid) >= 1, (rid, written)
