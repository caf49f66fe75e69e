"""``clawplane status``: per resource its phase, conditions, tools and errors (read-only)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from clawplane.cli.common import FolderArg, OutDirOpt, StateDirOpt, fail, workspace
from clawplane.cli.console import out
from clawplane.reconcile.supervisorfile import read_info, read_loop_status, supervisor_alive
from clawplane.state import ObservedState, StateDB, StateError, store


def status(
    folder: FolderArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """Show what clawplane last applied and observed; readable while an apply runs."""
    ws = workspace(folder, state_dir, out_dir)
    try:
        db = StateDB.open(ws.state_dir, create=False)
        observed = store.load_observed(db)
        audit = store.audit_entries(db, limit=1)
    except StateError as exc:
        fail(str(exc))
        return
    info = read_info(ws)
    alive = supervisor_alive(ws)
    doc = status_document(observed)
    doc["supervisor"] = {
        "running": alive,
        "pid": info.pid if info and alive else None,
        "endpoint": info.endpoint if info and alive else None,
    }
    doc["loop"] = read_loop_status(ws) if alive else None
    doc["lastApply"] = (
        {"at": audit[0].started_at, "outcome": audit[0].outcome, "commit": audit[0].git_commit}
        if audit
        else None
    )
    if as_json:
        out.print(json.dumps(doc, indent=2), markup=False)
        return
    _print_table(doc)


def status_document(observed: ObservedState) -> dict[str, Any]:
    """Status of every resource as a JSON-ready mapping."""
    resources = []
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
        resources.append(entry)
    return {"resources": resources}


def _print_table(doc: dict[str, Any]) -> None:
    sup = doc["supervisor"]
    out.print(
        f"supervisor: running (pid {sup['pid']}, {sup['endpoint']})"
        if sup["running"]
        else "supervisor: stopped",
        markup=False,
    )
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("KIND", "NAME", "PHASE", "READY", "DETAIL"):
        table.add_column(column, overflow="fold")
    for r in doc["resources"]:
        ready = next((c["status"] for c in r["conditions"] if c["type"] == "Ready"), "Unknown")
        table.add_row(r["kind"], r["name"], r["phase"], ready, _detail(r))
    out.print(table)
    loop = doc.get("loop") or {}
    if loop and loop.get("folderValid") is False:
        out.print("folder: INVALID — the last good state stays in force until it is fixed:", markup=False)
        for d in loop.get("diagnostics", [])[:20]:
            out.print(f"  {d}", markup=False)
    last = doc["lastApply"]
    if last:
        out.print(f"last apply: {last['at']} ({last['outcome']})", markup=False)


def _detail(r: dict[str, Any]) -> str:
    parts = []
    if r["kind"] == "McpServer" and "toolCount" in r:
        parts.append(f"{r['toolCount']} tools")
        if r.get("restarts"):
            parts.append(f"{r['restarts']} restarts")
        if r.get("pausedUntil"):
            parts.append(f"paused until {r['pausedUntil']}")
        if r.get("lastError"):
            parts.append(f"error: {r['lastError']}")
    if r["kind"] == "Agent" and "skills" in r:
        parts.append(f"{r['skills']} skills, prompt {r.get('promptChars', 0)} chars")
    return ", ".join(parts)
