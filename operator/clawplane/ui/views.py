"""What each dashboard page shows, read from the supervisor that serves it, every value redacted.

The pages run inside the folder's supervisor: runtimes are read live from its backend, the
recorded state from its state database, the agents' skills, prompts and tool catalogs from
the files it rendered, and approvals from its queue. Everything handed to a template first
passes ``redact_data`` (every form of every secret this process resolved) and token scrubbing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clawplane.approvals import Status
from clawplane.reconcile.daemon import PagesContext, live_reports
from clawplane.reconcile.statusview import status_document
from clawplane.reconcile.supervisorfile import read_loop_status
from clawplane.secrets import redact_data
from clawplane.state import store

__all__ = ["agent_view", "approvals_view", "overview", "server_view"]

_MAX_FILE_BYTES = 2 * 1024 * 1024


def _clean(value: dict[str, Any]) -> dict[str, Any]:
    return dict(redact_data(value))


def overview(ctx: PagesContext) -> dict[str, Any]:
    """Every resource with its phase and conditions, and the loop's view of the folder."""
    doc = status_document(store.load_observed(ctx.db), live=live_reports(ctx.backend))
    loop = read_loop_status(ctx.ws) or {}
    resources = sorted(doc["resources"], key=lambda r: (str(r["kind"]), str(r["name"])))
    last = loop.get("lastReconcile") or {}
    return _clean(
        {
            "folder": str(ctx.ws.folder),
            "resources": resources,
            "loop": {
                "folderValid": loop.get("folderValid", True),
                "diagnostics": loop.get("diagnostics") or [],
                "reconciles": loop.get("reconciles", 0),
                "last": last,
                "errors": loop.get("errors") or {},
                "held": loop.get("held") or [],
            },
            "endpoint": ctx.backend.supervisor.endpoint.base_url if ctx.backend.supervisor.endpoint else "",
            "pending": len(ctx.oversight.approvals.find()),
        }
    )


def _resource(doc: dict[str, Any], kind: str, name: str) -> dict[str, Any] | None:
    for entry in doc["resources"]:
        if entry["kind"] == kind and entry["name"] == name:
            return dict(entry)
    return None


def server_view(ctx: PagesContext, name: str) -> dict[str, Any] | None:
    """One McpServer: its endpoint, tools with descriptions, restarts and stderr tail (None: unknown)."""
    observed = store.load_observed(ctx.db)
    reports = live_reports(ctx.backend)
    entry = _resource(status_document(observed, live=reports), "McpServer", name)
    if entry is None:
        return None
    report = reports.get(name) or {}
    live = [t for t in report.get("tools") or () if isinstance(t, dict)]
    # Live while it runs; what was recorded when it does not.
    tools = [
        {
            "name": t.get("safe_name", ""),
            "tool": t.get("raw_name", ""),
            "description": t.get("description", ""),
        }
        for t in live
    ] or [
        {"name": t.safe_name, "tool": t.raw_name, "description": t.description}
        for t in observed.tools_observed.get(name, ())
    ]
    entry["endpoint"] = report.get("endpoint") or entry.get("endpoint") or ""
    entry["stderr"] = list(report.get("stderr") or entry.get("stderr") or [])
    entry["toolList"] = tools
    entry["sessions"] = ctx.backend.supervisor.session_counts().get(name, 0)
    return _clean(entry)


def _read_json(path: Path) -> Any:
    try:
        if path.stat().st_size > _MAX_FILE_BYTES:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def agent_view(ctx: PagesContext, name: str) -> dict[str, Any] | None:
    """One Agent: skills in, eligible and excluded with reasons, the prompt against its budget, tools."""
    entry = _resource(status_document(store.load_observed(ctx.db)), "Agent", name)
    if entry is None:
        return None
    # The id is a resource name the engine accepted (DNS-label shaped): no path can escape.
    folder = ctx.ws.out_dir / "agents" / name.lower()
    if folder.parent != ctx.ws.out_dir / "agents":
        return None
    snapshot = _read_json(folder / "snapshot.json") or {}
    prompt = snapshot.get("prompt") or {}
    skills = [s for s in snapshot.get("skills") or () if isinstance(s, dict)]
    chars, budget = int(prompt.get("chars") or 0), int(prompt.get("maxChars") or 0)
    entry.update(
        {
            "inPrompt": [s for s in skills if s.get("inPrompt")],
            "eligible": [s for s in skills if s.get("eligible") and not s.get("inPrompt")],
            "excluded": [s for s in skills if not s.get("eligible") or s.get("blockedByAgentFilter")],
            "promptChars": chars,
            "promptBudget": budget,
            "promptPercent": min(100, round(100 * chars / budget)) if budget else 0,
            "promptText": str(prompt.get("text") or ""),
            "truncated": bool(prompt.get("truncated")),
            "tools": [t for t in _read_json(folder / "tools.json") or () if isinstance(t, dict)],
            "rendered": sorted(p.name for p in folder.iterdir()) if folder.is_dir() else [],
        }
    )
    return _clean(entry)


def approvals_view(ctx: PagesContext) -> dict[str, Any]:
    """Pending approvals with what they hold, and the answered ones."""
    queue = ctx.oversight.approvals
    pending = [a.to_dict() for a in queue.find()]
    answered = [a.to_dict() for a in queue.find(statuses=[s for s in Status if not s.open], limit=50)]
    return _clean({"pending": pending, "answered": answered})
