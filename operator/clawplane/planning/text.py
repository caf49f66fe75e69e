"""A plan as human text: symbols, reasons, redacted field diffs and a summary line."""

from __future__ import annotations

import json
from typing import Any

from clawplane.planning.plan import ActionType, Change, Plan

SYMBOLS = {
    ActionType.CREATE: "+",
    ActionType.REPLACE: "-/+",
    ActionType.UPDATE: "~",
    ActionType.DELETE: "-",
    ActionType.NOOP: " ",
}
VERBS = {
    ActionType.CREATE: "will be created",
    ActionType.REPLACE: "will be replaced (restarted)",
    ActionType.UPDATE: "will be updated in place",
    ActionType.DELETE: "will be destroyed",
    ActionType.NOOP: "is unchanged",
}
KIND_ORDER = ("Gateway", "McpServer", "ModelProvider", "Skill", "Agent", "Channel", "Output")


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if value is not None else "null"


def _change_lines(change: Change) -> list[str]:
    why = "; ".join(r.message for r in change.reasons)
    lines = [f"  # {change.key} {VERBS[change.action]}" + (f" ({why})" if why else "")]
    lines.append(f"  {SYMBOLS[change.action]} {change.key}")
    for field in change.diff:
        if field.op == "added":
            lines.append(f"      + {field.path} = {_value(field.after)}")
        elif field.op == "removed":
            lines.append(f"      - {field.path} = {_value(field.before)}")
        else:
            lines.append(f"      ~ {field.path}: {_value(field.before)} -> {_value(field.after)}")
    return lines


def render_plan(plan: Plan, *, show_outputs: bool = True) -> str:
    """The whole plan as text, grouped by kind, ending with the summary line."""
    actionable = [c for c in plan.changes if c.action is not ActionType.NOOP]
    outputs = [c for c in plan.outputs if c.action is not ActionType.NOOP]
    problems = [f"  {p.text()}" for p in plan.render_problems]
    if problems:
        problems = ["", "Rendering problems (the configs leave these out):", *problems]
    if not actionable and not outputs:
        lines = ["No changes. The running state matches the folder.", *problems, *_warning_lines(plan)]
        return "\n".join(lines)
    lines = ["clawplane will perform the following actions:", ""]
    for kind in KIND_ORDER:
        group = [c for c in actionable if c.kind == kind]
        for change in group:
            lines.extend(_change_lines(change))
            lines.append("")
    if show_outputs and outputs:
        lines.append("Rendered files:")
        lines.extend(f"  {SYMBOLS[c.action]} {c.name} ({c.reasons[0].message})" for c in outputs)
        lines.append("")
    s = plan.summary()
    lines.append(f"Plan: {s.add} to add, {s.change} to change, {s.destroy} to destroy.")
    if plan.mass_delete:
        lines.append(
            "Warning: this plan deletes most or all managed resources; apply needs --allow-mass-delete."
        )
    lines.extend(problems)
    lines.extend(_warning_lines(plan))
    return "\n".join(lines)


def _warning_lines(plan: Plan) -> list[str]:
    if not plan.warnings:
        return []
    lines = ["", "Warnings:"]
    for w in plan.warnings:
        where = f" ({w.path})" if w.path else ""
        lines.append(f"  ! {w.key}{where}: {w.message} [{w.code}]")
        if w.hint:
            lines.append(f"    hint: {w.hint}")
    return lines
