"""Folding what the hosted runtimes report into the state database, level-based.

A runtime the supervisor no longer runs is recorded stopped; a running one's phase, process,
restarts, last error and pause are recorded when they moved, and a ready one's tool surface
when it changed (which the next plan reads as drift).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from clawplane.reconcile.localbackend import LocalBackend
from clawplane.state import StateDB, ToolRecord, store, utcnow

__all__ = ["sync_runtimes"]

log = logging.getLogger("clawplane.reconcile")


def sync_runtimes(db: StateDB, backend: LocalBackend) -> None:
    """Record what every hosted runtime of ``backend`` reports now, where it moved."""
    observed = store.load_observed(db)
    live = set(backend.supervisor.names())
    for name, rt in observed.runtimes.items():
        if name not in live:
            if rt.pid is not None and rt.phase != "stopped":
                store.put_runtime(db, replace(rt, phase="stopped", pid=None, pgid=None, updated_at=utcnow()))
            continue
        report = backend.report(name)
        if report is None:
            continue
        fresh = replace(
            rt,
            phase=report.phase,
            pid=report.pid,
            pgid=report.pgid,
            restarts=report.restarts,
            last_error=report.last_error,
            paused_until=report.paused_until,
        )
        if fresh != rt:
            store.put_runtime(db, replace(fresh, updated_at=utcnow()))
        if report.phase == "ready":
            tools = tuple(
                ToolRecord(t.raw_name, t.safe_name, t.schema_hash, t.description) for t in report.tools
            )
            if tools != tuple(observed.tools_observed.get(name, ())):
                log.info("runtime %s: tool surface changed (%d tools)", name, len(tools))
                store.set_tools(db, name, "observed", tools)
