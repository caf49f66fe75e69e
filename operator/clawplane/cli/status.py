"""``clawplane status``: per resource its phase, conditions, tools and errors (read-only).

What is shown is what is true now, not what the last apply saw: while the folder's
supervisor runs, its hosted servers' phase, pid, restart counter, last error and stderr come
from it live; when none runs, they are ``Stopped`` (with when, as far as it is known). The
loop's errors, a refused mass delete and an invalid folder are part of the text view too.
``status FOLDER NAME`` shows one resource in full, with its last stderr lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import psutil
import typer
from rich.table import Table
from rich.text import Text

from clawplane.cli.common import FolderArg, OutDirOpt, StateDirOpt, fail, workspace
from clawplane.cli.console import EXIT_INVALID, out
from clawplane.reconcile.applier import RENDER_PROBLEMS_KEY
from clawplane.reconcile.control import ControlError, request
from clawplane.reconcile.supervisorfile import (
    SupervisorInfo,
    ping,
    read_info,
    read_loop_status,
    supervisor_alive,
)
from clawplane.runtimes.childwatch import DESCRIPTORS_PER_SERVER
from clawplane.state import ObservedState, RuntimeRecord, StateDB, StateError, store


def status(
    folder: FolderArg,
    name: Annotated[
        str | None, typer.Argument(help="One resource (`notes` or `McpServer/notes`) to show in full.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
) -> None:
    """Show what runs now, as clawplane last applied and observed it; readable while an apply runs."""
    ws = workspace(folder, state_dir, out_dir)
    try:
        db = StateDB.open(ws.state_dir, create=False)
        observed = store.load_observed(db)
        audit = store.audit_entries(db, limit=1)
    except StateError as exc:
        fail(str(exc))
        return
    info = read_info(ws)
    alive = info is not None and supervisor_alive(ws)
    live = _live_runtimes(info) if alive and info is not None else None
    doc = status_document(observed, live=live)
    doc["folder"] = str(folder)
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
    answer = ping(ws) if alive else None
    doc["loop"] = (answer or {}).get("loop") or (read_loop_status(ws) if alive else None)
    doc["degraded"] = (answer or {}).get("degraded") or {}
    doc["lastApply"] = (
        {"at": audit[0].started_at, "outcome": audit[0].outcome, "commit": audit[0].git_commit}
        if audit
        else None
    )
    doc["renderProblems"] = json.loads(store.get_meta(db, RENDER_PROBLEMS_KEY) or "[]")
    if name is not None:
        entry = _find(doc, name)
        if entry is None:
            known = ", ".join(r["key"] for r in doc["resources"]) or "none"
            fail(f"no resource {name!r} in the state of {folder} (known: {known})", EXIT_INVALID)
            return
        if as_json:
            out.print(json.dumps(entry, indent=2), markup=False)
        else:
            _print_one(entry, doc)
        return
    if as_json:
        out.print(json.dumps(doc, indent=2), markup=False)
        return
    _print_table(doc)


def _live_runtimes(info: SupervisorInfo) -> dict[str, dict[str, Any]] | None:
    """The running supervisor's live reports by server name, or None if it does not answer."""
    import anyio

    async def ask() -> dict[str, dict[str, Any]] | None:
        async for event in request(Path(info.socket), {"op": "runtimes"}, timeout=2):
            if event.get("final"):
                found = event.get("runtimes")
                return found if event.get("ok") and isinstance(found, dict) else None
        return None

    try:
        return anyio.run(ask)
    except ControlError:
        return None


def _hosted(runtime: RuntimeRecord) -> bool:
    """A server the supervisor keeps running (not a probed remote or consumer server)."""
    return runtime.hosting == "clawplane" and runtime.transport == "stdio"


def status_document(
    observed: ObservedState, *, live: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Status of every resource as a JSON-ready mapping.

    ``live`` holds the running supervisor's reports (None: no supervisor answers), which
    override what the database recorded for hosted servers.
    """
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
            if _hosted(runtime) and rec.phase != "Disabled":
                _apply_liveness(entry, runtime, None if live is None else live.get(rec.name))
        resources.append(entry)
    return {"resources": resources}


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


def _find(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    matches = [r for r in doc["resources"] if name in (r["key"], r["name"])]
    return matches[0] if len(matches) == 1 else None


def _print_table(doc: dict[str, Any]) -> None:
    _print_supervisor(doc)
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("KIND", "NAME", "PHASE", "READY", "DETAIL"):
        table.add_column(column, overflow="fold")
    for r in doc["resources"]:
        ready = next((c["status"] for c in r["conditions"] if c["type"] == "Ready"), "Unknown")
        # Text cells: an error such as "[schema.unknown-field]" is not rich markup.
        table.add_row(*(Text(str(cell)) for cell in (r["kind"], r["name"], r["phase"], ready, _detail(r))))
    out.print(table)
    _print_loop(doc)
    for what, why in (doc.get("degraded") or {}).items():
        out.print(f"degraded: cannot write {what}: {why} (servers keep running; retrying)", markup=False)
    last = doc["lastApply"]
    if last:
        out.print(f"last apply: {last['at']} ({last['outcome']})", markup=False)
    if doc["renderProblems"]:
        out.print("the rendered configs leave out:", markup=False)
        for p in doc["renderProblems"]:
            where = f"{p['resource']}: " if p.get("resource") else ""
            hint = f"; {p['hint']}" if p.get("hint") else ""
            out.print(f"  {where}{p['severity']}[{p['code']}]: {p['message']}{hint}", markup=False)
    failing = [
        r["name"] for r in doc["resources"] if r.get("stderr") and r["phase"] not in ("Ready", "Disabled")
    ]
    if failing:
        out.print(f"its stderr: clawplane status {doc['folder']} {failing[0]}", markup=False)


def _capacity(pid: int) -> dict[str, int] | None:
    """The supervisor's descriptors in use and allowed, as the kernel reports them now."""
    try:
        proc = psutil.Process(pid)
        soft, _ = proc.rlimit(psutil.RLIMIT_NOFILE)
        used, threads = proc.num_fds(), proc.num_threads()
    except (psutil.Error, OSError):
        return None  # gone meanwhile, or not ours to inspect
    return {"openFiles": used, "fileLimit": soft, "threads": threads,
            "moreServers": max(0, soft - used) // DESCRIPTORS_PER_SERVER}


def _print_supervisor(doc: dict[str, Any]) -> None:
    sup = doc["supervisor"]
    if sup["running"]:
        watching = (doc.get("loop") or {}).get("watching")
        mode = "watching the folder" if watching else "carrying out `clawplane apply` only"
        out.print(f"supervisor: running (pid {sup['pid']}, {sup['endpoint']}; {mode})", markup=False)
        if not sup["answering"]:
            out.print("  it does not answer on its control socket; phases below are as last recorded",
                      markup=False)  # fmt: skip
        cap = sup.get("capacity")
        if cap:
            out.print(f"  descriptors: {cap['openFiles']} open of {cap['fileLimit']} (room for about "
                      f"{cap['moreServers']} more stdio servers); {cap['threads']} threads", markup=False)
    elif sup.get("lastPid"):
        out.print(f"supervisor: stopped (pid {sup['lastPid']} is gone without shutting down cleanly)",
                  markup=False)  # fmt: skip
    else:
        out.print("supervisor: stopped", markup=False)


def _print_loop(doc: dict[str, Any]) -> None:
    loop = doc.get("loop") or {}
    if not loop:
        return
    if loop.get("folderValid") is False:
        out.print("folder: INVALID — the last good state stays in force until it is fixed:", markup=False)
        for d in loop.get("diagnostics", [])[:20]:
            for i, line in enumerate(str(d).splitlines()):
                out.print(("  " if i == 0 else "    ") + line.strip(), markup=False)
    if loop.get("refused"):
        out.print(f"loop: REFUSED — {loop['refused']}", markup=False)
    held = loop.get("held")
    if held:
        what = f"{held['approval']} ({held['status']}, expires {held['expiresAt']})"
        show = f"clawplane approvals show {doc['folder']} {held['approval']}"
        out.print(f"loop: HELD for approval {what}: {', '.join(held['actions'])}; see `{show}`", markup=False)
    errors: dict[str, str] = loop.get("errors") or {}
    for key, error in errors.items():
        out.print(f"loop: {key} failed: {error}", markup=False)
    last = loop.get("lastReconcile") or {}
    if last.get("result"):
        out.print(f"last reconcile: {last.get('at')} {last['result']} ({last.get('reason')})", markup=False)


def _detail(r: dict[str, Any]) -> str:
    parts = []
    if r["kind"] == "McpServer" and "toolCount" in r:
        parts.append(f"{r['toolCount']} tools")
        if r.get("restarts"):
            parts.append(f"{r['restarts']} restarts")
        if r.get("pausedUntil"):
            parts.append(f"paused until {r['pausedUntil']}")
        if r.get("stoppedAt"):
            parts.append(f"stopped at {r['stoppedAt']}")
        if r.get("lastSeenAt"):
            parts.append(f"supervisor gone, last record {r['lastSeenAt']}")
        if r.get("lastError") and r["phase"] != "Stopped":
            parts.append(f"error: {r['lastError']}")
    if r["kind"] == "Agent" and "skills" in r:
        parts.append(f"{r['skills']} skills, prompt {r.get('promptChars', 0)} chars")
    return ", ".join(parts)


def _print_one(r: dict[str, Any], doc: dict[str, Any]) -> None:
    _print_supervisor(doc)
    out.print(f"{r['key']}: {r['phase']}", markup=False)
    for key in (
        "pid",
        "restarts",
        "toolCount",
        "pausedUntil",
        "stoppedAt",
        "lastSeenAt",
        "endpoint",
        "lastError",
    ):
        if r.get(key) not in (None, "", []):
            out.print(f"  {key}: {r[key]}", markup=False)
    if r.get("tools"):
        out.print(f"  tools: {', '.join(r['tools'])}", markup=False)
    for cond in r.get("conditions", []):
        message = f" — {cond['message']}" if cond.get("message") else ""
        out.print(f"  {cond['type']}={cond['status']} ({cond.get('reason', '')}){message}", markup=False)
    lines = r.get("stderr") or []
    out.print(
        f"  stderr (last {len(lines)} line(s)):" if lines else "  stderr: nothing written", markup=False
    )
    for line in lines:
        out.print(f"    {line}", markup=False)
