"""``clawplane status``: per resource its phase, conditions, tools and errors (read-only).

What is shown is what is true now (``reconcile.statusview`` makes the document). The
loop's errors, a refused mass delete, held approvals and an invalid folder are part of the
text view too.
``status FOLDER NAME`` shows one resource in full, with its last stderr lines.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import anyio
import typer
from rich.table import Table
from rich.text import Text

from clawplane.cli.common import FolderArg, OutDirOpt, StateDirOpt, fail, workspace
from clawplane.cli.console import EXIT_INVALID, out
from clawplane.reconcile.statusview import find_resource, folder_status
from clawplane.state import StateError


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
        doc = anyio.run(folder_status, ws)
    except StateError as exc:
        fail(str(exc))
        return
    doc["folder"] = str(folder)
    if name is not None:
        entry = find_resource(doc, name)
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
            out.print(
                f"  descriptors: {cap['openFiles']} open of {cap['fileLimit']} (room for about "
                f"{cap['moreServers']} more stdio servers); {cap['threads']} threads",
                markup=False,
            )
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
    if r["kind"] == "ModelProvider":
        parts.append(_provider_detail(r))
    parts.extend(f"warning: {w['message']}" for w in r.get("warnings", []))
    return ", ".join(parts)


def _provider_detail(r: dict[str, Any]) -> str:
    if r["phase"] == "Ready":
        models: list[str] = r.get("models", [])
        count = r.get("modelCount", len(models))
        shown = ", ".join(models[:3]) + (f", +{count - 3}" if count > 3 else "")
        return f"{count} models ({shown}) at {r.get('endpoint')}"
    ready: dict[str, Any] = next((c for c in r["conditions"] if c["type"] == "Ready"), {})
    return f"{ready.get('reason', '')}: {ready.get('message', '')}"


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
