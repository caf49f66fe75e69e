"""What runs now, per resource: the document behind ``clawplane status`` and the MCP ``status`` tool.

What is shown is what is true now, not what the last apply saw: while the folder's
supervisor runs, its hosted servers' phase, pid, restart counter, last error and stderr come
from it live; when none runs, they are ``Stopped`` (with when, as far as it is known). The
document also says whether a supervisor runs, what its loop last did and the last apply.
"""

from __future__ import annotations

import json
from typing import Any

import psutil

from clawplane.planning.models import listed_models, model_refs, model_warnings
from clawplane.runtimes.process import DESCRIPTORS_PER_SERVER
from clawplane.state import ObservedState, RuntimeRecord, StateDB, store
from clawplane.workspace import (
    Ping,
    Request,
    Runtimes,
    SupervisorClient,
    SupervisorInfo,
    Workspace,
    answer,
    read_info,
    read_loop_status,
    supervisor_alive,
)

__all__ = ["RENDER_PROBLEMS_KEY", "find_resource", "folder_status", "status_document"]

RENDER_PROBLEMS_KEY = "render_problems"
"""State meta key: what the last written configs leave out (``status`` shows it)."""


async def folder_status(ws: Workspace) -> dict[str, Any]:
    """The whole status document of a folder: resources, supervisor, loop and last apply.

    Raises:
        StateError: The folder has no (usable) state database.
    """
    db = StateDB.open(ws.state_dir, create=False)
    try:
        observed = store.load_observed(db)
        audit = store.audit_entries(db, limit=1)
        render_problems = json.loads(store.get_meta(db, RENDER_PROBLEMS_KEY) or "[]")
    finally:
        db.close()
    info = read_info(ws)
    alive = info is not None and supervisor_alive(ws)
    live = await _live_runtimes(info) if alive and info is not None else None
    doc = status_document(observed, live=live)
    doc["folder"] = str(ws.folder)
    doc["supervisor"] = {
        "running": alive,
        "pid": info.pid if info and alive else None,
        "endpoint": info.endpoint if info and alive else None,
        "answering": live is not None,
    }
    if alive and info is not None:
        doc["supervisor"]["capacity"] = _capacity(info.pid)
    if not alive and info is not None:
        doc["supervisor"]["lastPid"] = info.pid  # a pidfile left behind: it did not shut down cleanly
    # The supervisor's own answer is live even when its disk refuses writes; loop.json may lag.
    answer = await _ask(info, Ping()) if alive and info is not None else None
    doc["loop"] = (answer or {}).get("loop") or (read_loop_status(ws) if alive else None)
    doc["degraded"] = (answer or {}).get("degraded") or {}
    doc["lastApply"] = (
        {"at": audit[0].started_at, "outcome": audit[0].outcome, "commit": audit[0].git_commit}
        if audit
        else None
    )
    doc["renderProblems"] = render_problems
    return doc


async def _ask(info: SupervisorInfo, message: Request) -> dict[str, Any] | None:
    """The running supervisor's final answer to ``message``, or None if it does not answer."""
    return await answer(SupervisorClient.of(info, timeout=2), message, timeout=2)


async def _live_runtimes(info: SupervisorInfo) -> dict[str, dict[str, Any]] | None:
    """The running supervisor's live reports by server name, or None if it does not answer."""
    answer = await _ask(info, Runtimes())
    found = (answer or {}).get("runtimes")
    return found if isinstance(found, dict) else None


def _hosted(runtime: RuntimeRecord) -> bool:
    """A server the supervisor keeps running (not a probed remote or consumer server)."""
    return runtime.hosting == "clawplane" and runtime.transport == "stdio"


def status_document(
    observed: ObservedState, *, live: dict[str, dict[str, Any]] | None = None, supervised: bool = True
) -> dict[str, Any]:
    """Status of every resource as a JSON-ready mapping.

    ``live`` holds the running supervisor's reports (None: no supervisor answers), which
    override what the database recorded for hosted servers. ``supervised=False`` keeps the
    recorded phases as they are (the operator: its servers are pods, checked every pass).
    """
    resources = []
    warnings: dict[str, list[dict[str, str]]] = {}
    for w in _model_warnings(observed):
        warnings.setdefault(w.key, []).append(w.model_dump(exclude_defaults=True))
    for rec in observed.resources.values():
        entry: dict[str, Any] = {
            "key": rec.key,
            "kind": rec.kind,
            "name": rec.name,
            "phase": rec.phase,
            "generation": rec.generation,
            "observedGeneration": rec.observed_generation,
            "conditions": rec.conditions,
            **rec.status,
        }
        runtime = observed.runtimes.get(rec.name) if rec.kind == "McpServer" else None
        if runtime is not None:
            entry.update(
                {
                    "runtimePhase": runtime.phase,
                    "pid": runtime.pid,
                    "restarts": runtime.restarts,
                    "pausedUntil": runtime.paused_until,
                    "lastError": runtime.last_error,
                    "protocolVersion": runtime.protocol_version,
                    "tools": [t.safe_name for t in observed.tools_observed.get(rec.name, ())],
                }
            )
            if supervised and _hosted(runtime) and rec.phase != "Disabled":
                _apply_liveness(entry, runtime, None if live is None else live.get(rec.name))
        resources.append(entry)
        if rec.key in warnings:
            entry["warnings"] = warnings[rec.key]
    return {"resources": resources}


def _model_warnings(observed: ObservedState) -> list[Any]:
    """What plan warns about models, from what was last applied (agents' and providers' records)."""
    refs = [ref for rec in observed.resources.values() for ref in model_refs(rec.key, rec.spec)]
    declared = {
        rec.name.lower(): [str(m.get("id")) for m in rec.spec.get("models") or [] if isinstance(m, dict)]
        for rec in observed.resources.values()
        if rec.kind == "ModelProvider"
    }
    return model_warnings(refs, listed_models(observed), declared)


def _apply_liveness(entry: dict[str, Any], runtime: RuntimeRecord, report: dict[str, Any] | None) -> None:
    """Overlay what is true now on a hosted server's recorded status."""
    if report is not None:
        phase = str(report.get("phase", "unknown"))
        entry.update(
            {
                "phase": "Ready" if phase == "ready" else phase.capitalize(),
                "runtimePhase": phase,
                "pid": report.get("pid"),
                "restarts": report.get("restarts", 0),
                "lastError": report.get("last_error"),
                "pausedUntil": report.get("paused_until"),
                "toolCount": len(report.get("tools") or ())
                if phase == "ready"
                else entry.get("toolCount", 0),
                "stderr": list(report.get("stderr") or ()),
            }
        )
        ready = phase == "ready"
        message = "" if ready else str(report.get("last_error") or phase)
        _set_ready(entry, ready, "Ready" if ready else phase.capitalize(), message)
        return
    # No supervisor: nothing it ran is running, whatever the last apply recorded.
    clean = runtime.phase == "stopped"
    entry.update({"phase": "Stopped", "runtimePhase": "stopped", "pid": None})
    if clean:
        entry["stoppedAt"] = runtime.updated_at
        message = f"the supervisor stopped at {runtime.updated_at}"
    else:
        entry["lastSeenAt"] = runtime.updated_at
        message = (
            f"no supervisor runs this folder; it did not shut down cleanly (last record {runtime.updated_at})"
        )
    _set_ready(
        entry, False, "SupervisorStopped", message + "; start it with `clawplane apply` or `clawplane run`"
    )


def _set_ready(entry: dict[str, Any], ready: bool, reason: str, message: str) -> None:
    conditions = [dict(c) for c in entry.get("conditions", [])]
    for cond in conditions:
        if cond.get("type") == "Ready":
            cond.update({"status": "True" if ready else "False", "reason": reason, "message": message})
    entry["conditions"] = conditions


def find_resource(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The one resource called ``name`` (``notes`` or ``McpServer/notes``) in a status document."""
    matches = [r for r in doc["resources"] if name in (r["key"], r["name"])]
    return matches[0] if len(matches) == 1 else None


def _capacity(pid: int) -> dict[str, int] | None:
    """The supervisor's descriptors in use and allowed, as the kernel reports them now."""
    try:
        proc = psutil.Process(pid)
        soft, _ = proc.rlimit(psutil.RLIMIT_NOFILE)
        used, threads = proc.num_fds(), proc.num_threads()
    except (psutil.Error, OSError):
        return None  # gone meanwhile, or not ours to inspect
    return {
        "openFiles": used,
        "fileLimit": soft,
        "threads": threads,
        "moreServers": max(0, soft - used) // DESCRIPTORS_PER_SERVER,
    }
