"""What each dashboard page shows, read from its ``Source``, every value redacted.

The pages run inside the process that reconciles (a folder's supervisor, or the operator):
runtimes are read live from it, the recorded state from its state database, the agents'
skills, prompts and tool catalogs from the files it rendered, the plan from the same planner
as ``clawplane plan``, and approvals, events and applies from its queues and audit log.
Everything handed to a template first passes ``redact_data`` (every form of every secret
this process resolved) and token scrubbing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from markupsafe import Markup

from clawplane.approvals import Status
from clawplane.reconcile.queries import QueryError, scrubbed
from clawplane.secrets import redact_data
from clawplane.state import CallFilter, find_calls, store, unrecorded
from clawplane.telemetry import Outcome
from clawplane.ui import charts
from clawplane.ui.source import Source

CALLS_SHOWN = 100
CALL_OUTCOMES = tuple(o.value for o in Outcome)
__all__ = ["agent_view", "approvals_view", "audit_view", "overview", "plan_view", "server_view", "traffic"]

_MAX_FILE_BYTES = 2 * 1024 * 1024
RECENT_EVENTS = 30


def _clean(value: dict[str, Any]) -> dict[str, Any]:
    return scrubbed(redact_data(value))


def overview(src: Source) -> dict[str, Any]:
    """Every resource with its phase and conditions, what the supervisor is doing, and the folder's state."""
    doc = src.status()
    loop = src.loop()
    resources = sorted(doc["resources"], key=lambda r: (str(r["kind"]), str(r["name"])))
    last = loop.get("lastReconcile") or {}
    applies = [e for e in src.audit(20)["entries"] if not str(e.get("outcome", "")).startswith("approval-")]
    running = [e for e in applies if e.get("outcome") == "running"]
    finished = [e for e in applies if e.get("outcome") != "running"]
    view = _clean(
        {
            "label": src.label,
            "resources": resources,
            "loop": {
                # A supervisor that `clawplane apply` started does not watch the folder: its loop
                # never checks it, so "not checked" (None) is not "invalid" (False).
                "watching": bool(loop.get("watching", True)),
                "folderValid": loop.get("folderValid"),
                "diagnostics": loop.get("diagnostics") or [],
                "reconciles": loop.get("reconciles", 0),
                "last": last,
                "errors": loop.get("errors") or {},
                "held": loop.get("held") or [],
            },
            "applying": running[0] if running else None,
            "lastApply": finished[0] if finished else None,
            "endpoint": src.endpoint(),
            "pending": len(src.oversight.approvals.find()),
        }
    )
    view["sparklines"] = _sparklines(src, [str(r["name"]) for r in resources if r["kind"] == "McpServer"])
    return view


def traffic(src: Source, kind: str, name: str) -> dict[str, Any] | None:
    """The hour's charts of one server or agent (``kind``) and their words; None where this
    source carries no traffic (the page then says where to read it)."""
    series = src.traffic()
    if series is None:
        return None
    minutes = series.hour(kind, name)
    empty = "no calls " + charts.hour_span(series.since, None)
    return {
        # The charts escape every name they draw: safe to place as they are.
        "activity": Markup(charts.activity_chart(minutes, name, empty=empty)),
        "latency": Markup(charts.latency_chart(minutes, name, empty=empty)),
        "summary": charts.summary(minutes, series.since),
    }


def _sparklines(src: Source, servers: list[str]) -> dict[str, dict[str, Any]] | None:
    series = src.traffic()
    if series is None:
        return None
    found = {}
    for name in servers:
        minutes = series.hour("server", name)
        svg = Markup(charts.sparkline(minutes, name))  # it escapes the name
        found[name] = {"svg": svg, "calls": sum(m.calls for m in minutes)}
    return found


def _resource(doc: dict[str, Any], kind: str, name: str) -> dict[str, Any] | None:
    for entry in doc["resources"]:
        if entry["kind"] == kind and entry["name"] == name:
            return dict(entry)
    return None


def server_view(src: Source, name: str) -> dict[str, Any] | None:
    """One McpServer: endpoint, tools, restarts, stderr tail and recent events (None: unknown)."""
    observed = store.load_observed(src.db)
    reports = src.live()
    entry = _resource(src.status(), "McpServer", name)
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
    entry["sessions"] = src.sessions().get(name, 0)
    entry["events"] = [
        {"at": e.at, "type": e.type, **dict(e.data)}
        for e in src.oversight.events.recent([f"McpServer/{name}", name], limit=RECENT_EVENTS)
    ]
    view = _clean(entry)
    view["traffic"] = traffic(src, "server", name)
    return view


def _read_json(path: Path) -> Any:
    try:
        if path.stat().st_size > _MAX_FILE_BYTES:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def agent_view(src: Source, name: str) -> dict[str, Any] | None:
    """One Agent: skills in, eligible and excluded with reasons, the prompt against its budget, tools."""
    entry = _resource(src.status(), "Agent", name)
    if entry is None:
        return None
    # The id is a resource name the engine accepted (DNS-label shaped): no path can escape.
    folder = src.ws.out_dir / "agents" / name.lower()
    if folder.parent != src.ws.out_dir / "agents":
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
    view = _clean(entry)
    view["traffic"] = traffic(src, "agent", name)
    return view


def approvals_view(src: Source) -> dict[str, Any]:
    """Pending approvals with what they hold, and the answered ones."""
    queue = src.oversight.approvals
    pending = [a.to_dict() for a in queue.find()]
    return _clean({"pending": pending, "answered": _answered(src)})


def _answered(src: Source, limit: int = 50) -> list[dict[str, Any]]:
    closed = [s for s in Status if not s.open]
    return [a.to_dict() for a in src.oversight.approvals.find(statuses=closed, limit=limit)]


async def plan_view(src: Source, who: str) -> dict[str, Any]:
    """What an apply would do now (``clawplane plan``'s text and changes), or why it cannot be planned
    (asked as ``who``, within its share of the query worker)."""
    try:
        found = await src.planned(who)
    except QueryError as exc:
        return _clean({"error": str(exc), "changes": [], "text": "", "held": []})
    plan = found["plan"]
    changes = [c for c in plan.get("changes") or () if c.get("action") != "noop"]
    outputs = [c for c in plan.get("outputs") or () if c.get("action") != "noop"]
    return _clean({**found, "error": "", "changes": changes, "outputs": outputs})


def audit_view(src: Source, wanted: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Recent applies (who, commit, plan hash, outcome), the approval answers, and the latest tool
    calls (filtered by ``wanted``'s server, tool and outcome)."""
    wanted = wanted or {}
    picked = {k: v for k in ("server", "tool", "outcome") if (v := wanted.get(k, "").strip())}
    if picked.get("outcome") not in (None, *CALL_OUTCOMES):
        picked.pop("outcome")
    calls = find_calls(
        src.db,
        CallFilter(
            server=picked.get("server"),
            tool=picked.get("tool"),
            outcome=picked.get("outcome"),
            limit=CALLS_SHOWN,
        ),
    )
    return _clean(
        {
            "applies": src.audit(50)["entries"],
            "answers": _answered(src),
            "calls": calls,
            "filters": picked,
            "outcomes": list(CALL_OUTCOMES),
            "unrecorded": unrecorded(src.db),
        }
    )
