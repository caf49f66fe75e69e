"""A static plan between two desired states (``clawplane diff``), and its renderings.

The ``before`` desired state stands in for the observed state: each of its resources
becomes a ``ResourceRecord`` with its config hash and redacted spec, and there are no
runtimes or outputs. ``make_plan`` then says what moving to ``after`` implies. Reasons
that only a live system can produce (runtime missing, tools not discovered) are
dropped, since a static diff knows nothing about processes.

Both sides are usually materialized in different temporary folders, so config hashes
are recomputed with a stdio server's ``cwd`` relative to each side's root instead of
absolute: the same commit compiled twice must hash the same.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from clawplane._utils.compactjson import canonical as _canonical
from clawplane.desired import DesiredResource, DesiredState
from clawplane.models import McpServer
from clawplane.planning.plan import ActionType, Change, FieldChange, Plan, ReasonCode
from clawplane.planning.planner import make_plan
from clawplane.planning.text import KIND_ORDER, SYMBOLS, VERBS, render_plan
from clawplane.state import ObservedState, ResourceRecord

PromptSizes = tuple[Mapping[str, int], Mapping[str, int]]
"""Prompt size per agent before and after; an agent missing from a side has no size there."""

_LIVE_ONLY = frozenset(
    {
        ReasonCode.RUNTIME_MISSING,
        ReasonCode.RUNTIME_CRASHED,
        ReasonCode.RUNTIME_PAUSED_EXPIRED,
        ReasonCode.TOOLS_DRIFTED,
        ReasonCode.NOT_DISCOVERED,
    }
)


def _portable_hash(d: DesiredResource, root: Path) -> str:
    res = d.resource
    full = res.model_dump(mode="json", by_alias=True, exclude_none=True).get("spec", {})
    extra: dict[str, Any] = {}
    if isinstance(res, McpServer) and res.spec.cwd:
        target = Path(os.path.normpath(d.base_dir / res.spec.cwd))
        extra["cwd"] = Path(os.path.relpath(target, root)).as_posix()
    doc = {"kind": res.kind, "name": res.name, "spec": full, "extra": extra}
    return hashlib.sha256(_canonical(doc).encode("utf-8")).hexdigest()[:16]


def portable(desired: DesiredState, root: Path) -> DesiredState:
    """The same desired state with hashes that do not depend on where ``root`` lives."""
    root = root.resolve()
    resources = {key: replace(d, base_hash=_portable_hash(d, root)) for key, d in desired.resources.items()}
    return replace(desired, resources=MappingProxyType(resources))


def observed_from(desired: DesiredState) -> ObservedState:
    """An observed state in which exactly ``desired`` was applied (no runtimes, no outputs)."""
    records = {
        key: ResourceRecord(
            key=key,
            kind=d.kind,
            name=d.name,
            config_hash=d.config_hash,
            generation=1,
            observed_generation=1,
            spec=d.spec,
            phase="ready",
            status={"digests": dict(d.digests)},
        )
        for key, d in desired.resources.items()
    }
    return ObservedState(resources=records)


@dataclass(frozen=True)
class AgentChange:
    """What changes for one agent beyond its own spec: servers, skills allowlist, prompt size."""

    agent: str
    status: str  # added | removed | changed
    servers_added: list[str] = field(default_factory=list)
    servers_removed: list[str] = field(default_factory=list)
    skills_before: list[str] | None = None
    skills_after: list[str] | None = None
    prompt_before: int | None = None
    """Skills prompt size (UTF-16 units) before; None when the agent is new or sizes were not computed."""
    prompt_after: int | None = None
    """Skills prompt size after; None when the agent is removed or sizes were not computed."""

    @property
    def prompt_delta(self) -> int | None:
        """``after - before`` (a missing side counts 0); None when no size is known."""
        if self.prompt_before is None and self.prompt_after is None:
            return None
        return (self.prompt_after or 0) - (self.prompt_before or 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "agent": self.agent,
            "status": self.status,
            "serversAdded": self.servers_added,
            "serversRemoved": self.servers_removed,
            "skillsBefore": self.skills_before,
            "skillsAfter": self.skills_after,
            "promptCharsBefore": self.prompt_before,
            "promptCharsAfter": self.prompt_after,
            "promptCharsDelta": self.prompt_delta,
        }


@dataclass(frozen=True)
class StaticDiff:
    """The plan between two desired states plus the per-agent view."""

    plan: Plan
    agents: list[AgentChange]
    renames: list[tuple[str, str]]

    @property
    def has_changes(self) -> bool:
        """True when anything would change (a skill file outside any resource can change a prompt)."""
        return self.plan.has_changes or bool(self.agents)

    def to_json(self) -> str:
        """The plan JSON plus ``agents`` and ``renames``."""
        doc = json.loads(self.plan.to_json())
        doc["agents"] = [a.to_dict() for a in self.agents]
        doc["renames"] = [{"from": a, "to": b} for a, b in self.renames]
        return json.dumps(doc, indent=2, ensure_ascii=False)


def _static(change: Change, before: DesiredState) -> Change:
    reasons = [r for r in change.reasons if r.code not in _LIVE_ONLY]
    if change.action is ActionType.DELETE and change.key in before.resources:
        gone = before.resources[change.key].spec
        removed = [FieldChange(path=f"spec.{k}", op="removed", before=v) for k, v in gone.items()]
        return change.model_copy(update={"reasons": reasons, "diff": removed})
    if change.action in (ActionType.REPLACE, ActionType.UPDATE) and change.hash_before == change.hash_after:
        return change.model_copy(update={"action": ActionType.NOOP, "reasons": []})
    return change.model_copy(update={"reasons": reasons})


def _agent_changes(before: DesiredState, after: DesiredState, prompts: PromptSizes) -> list[AgentChange]:
    out: list[AgentChange] = []
    for agent in sorted(before.agents.keys() | after.agents.keys()):
        old, new = before.agents.get(agent), after.agents.get(agent)
        old_servers = set(old.servers) if old else set()
        new_servers = set(new.servers) if new else set()
        old_skills = list(old.skills_filter) if old and old.skills_filter is not None else None
        new_skills = list(new.skills_filter) if new and new.skills_filter is not None else None
        old_prompt, new_prompt = prompts[0].get(agent), prompts[1].get(agent)
        status = "added" if old is None else "removed" if new is None else "changed"
        same = old_servers == new_servers and old_skills == new_skills and old_prompt == new_prompt
        if status == "changed" and same:
            continue
        out.append(
            AgentChange(
                agent,
                status,
                sorted(new_servers - old_servers),
                sorted(old_servers - new_servers),
                old_skills,
                new_skills,
                old_prompt,
                new_prompt,
            )
        )
    return out


def _renames(before: DesiredState, after: DesiredState, plan: Plan) -> list[tuple[str, str]]:
    """Deleted/created pairs of one kind with the same spec: most likely renames."""
    created = [c for c in plan.changes if c.action is ActionType.CREATE]
    found: list[tuple[str, str]] = []
    used: set[str] = set()
    for gone in (c for c in plan.changes if c.action is ActionType.DELETE):
        spec = before.resources[gone.key].spec
        for new in created:
            if new.kind == gone.kind and new.key not in used and after.resources[new.key].spec == spec:
                found.append((gone.key, new.key))
                used.add(new.key)
                break
    return found


def static_diff(
    before: DesiredState, after: DesiredState, *, created_at: str, prompts: PromptSizes = ({}, {})
) -> StaticDiff:
    """What moving from ``before`` to ``after`` implies, computed without any live state.

    ``prompts`` holds each side's prompt size per agent (see ``planning.prompts``).
    """
    plan = make_plan(after, observed_from(before), outputs={}, created_at=created_at)
    plan = plan.model_copy(update={"changes": [_static(c, before) for c in plan.changes], "outputs": []})
    return StaticDiff(plan, _agent_changes(before, after, prompts), _renames(before, after, plan))


def render_text(diff: StaticDiff) -> str:
    """The plan as ``clawplane plan`` prints it, then the agent changes."""
    if not diff.has_changes:
        return "No changes between the two sides."
    text = render_plan(diff.plan, show_outputs=False) if diff.plan.has_changes else "No resource changes."
    lines = [text]
    if diff.renames:
        lines.append("")
        lines.extend(f"Likely rename: {a} -> {b}" for a, b in diff.renames)
    if diff.agents:
        lines.append("")
        lines.append("Agents:")
        lines.extend(f"  {_agent_line(a)}" for a in diff.agents)
    return "\n".join(lines)


def _agent_line(a: AgentChange) -> str:
    parts = []
    if a.servers_added:
        parts.append("servers +" + ", +".join(a.servers_added))
    if a.servers_removed:
        parts.append("servers -" + ", -".join(a.servers_removed))
    if a.skills_before != a.skills_after:
        parts.append(f"skills {_skills(a.skills_before)} -> {_skills(a.skills_after)}")
    if a.prompt_before != a.prompt_after and a.prompt_delta is not None:
        parts.append(_prompt(a.prompt_before, a.prompt_after, a.prompt_delta))
    return f"{a.agent} ({a.status})" + (": " + "; ".join(parts) if parts else "")


def _prompt(before: int | None, after: int | None, delta: int) -> str:
    sides = [str(v) if v is not None else "none" for v in (before, after)]
    return f"prompt {sides[0]} -> {sides[1]} chars ({delta:+d})"


def _skills(value: list[str] | None) -> str:
    return "inherit" if value is None else "[" + ", ".join(value) + "]"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_value(value: Any) -> str:
    return "" if value is None else "`" + _md(json.dumps(value, ensure_ascii=False)).replace("`", "'") + "`"


def _md_field(f: FieldChange) -> str:
    return f"| `{_md(f.path)}` | {f.op} | {_md_value(f.before)} | {_md_value(f.after)} |"


def render_markdown(diff: StaticDiff, *, title: str = "clawplane diff") -> str:
    """A pull-request comment: summary table, then per-resource details with field diffs."""
    plan = diff.plan
    s = plan.summary()
    lines = [f"### {title}", ""]
    if not diff.has_changes:
        lines.append("No changes.")
        return "\n".join(lines) + "\n"
    lines += [
        f"**Plan:** {s.add} to add, {s.change} to change, {s.destroy} to destroy ({s.unchanged} unchanged).",
    ]
    actionable = [
        c for kind in KIND_ORDER for c in plan.changes if c.kind == kind and c.action is not ActionType.NOOP
    ]
    if actionable:
        lines += ["", "| Action | Kind | Name | Reason |", "|---|---|---|---|"]
    for c in actionable:
        why = "; ".join(r.message for r in c.reasons)
        lines.append(f"| `{SYMBOLS[c.action]}` {c.action.value} | {c.kind} | `{_md(c.name)}` | {_md(why)} |")
    if plan.mass_delete:
        lines += ["", "> **Warning:** this change deletes most or all resources."]
    if diff.renames:
        lines += ["", *(f"- Likely rename: `{a}` → `{b}`" for a, b in diff.renames)]
    if diff.agents:
        lines += ["", "#### Agents", "", *(f"- {_agent_line(a)}" for a in diff.agents)]
    lines += ["", "#### Details", ""] if actionable else [""]
    for c in actionable:
        lines.append("<details>")
        lines.append(f"<summary><code>{SYMBOLS[c.action]} {c.key}</code> {VERBS[c.action]}</summary>")
        lines.append("")
        if c.diff:
            lines += ["| Field | Change | Before | After |", "|---|---|---|---|"]
            lines += [_md_field(f) for f in c.diff]
        else:
            lines.append("_no field changes_")
        lines += ["", "</details>", ""]
    lines.append("_Secret values are redacted._")
    return "\n".join(lines) + "\n"


__all__ = [
    "AgentChange",
    "PromptSizes",
    "StaticDiff",
    "observed_from",
    "portable",
    "render_markdown",
    "render_text",
    "static_diff",
]
