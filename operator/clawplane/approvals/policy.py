"""Which plan actions a Gateway's approval rules hold back.

A rule matches an action when every criterion it gives matches: the resource kind, the
action, the name (exact or ``*`` glob), the labels (the desired resource's; for a delete,
the labels it had when it was last applied) and the changed field paths (a path matches
itself and everything below it: ``spec.env`` matches ``spec.env.TOKEN``).

Only what the folder changes is ever held: actions whose reasons include a new, changed or
removed resource (spec, referenced secret or skill files). Repairs the loop makes on its
own (a crashed runtime restarted, a drifted tool surface re-recorded) are never held, so a
rule cannot keep a crashed server down.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clawplane.desired import DesiredState
from clawplane.models import ApprovalRule, Gateway
from clawplane.naming import glob_matches
from clawplane.planning import ActionType, Change, FieldChange, Plan, ReasonCode
from clawplane.state import ObservedState

__all__ = ["HeldAction", "fingerprint", "held_actions", "rules_of"]

SOURCE_REASONS = frozenset(
    {
        ReasonCode.NEW,
        ReasonCode.SPEC_CHANGED,
        ReasonCode.SECRET_CHANGED,
        ReasonCode.SKILLS_CHANGED,
        ReasonCode.REMOVED,
    }
)


@dataclass(frozen=True, slots=True)
class HeldAction:
    """One plan action a rule holds, and which rule."""

    change: Change
    rule: str
    ttl_ms: int

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """What makes this exactly the same action again: key, action and both config hashes."""
        c = self.change
        return (c.key, c.action.value, c.hash_before or "", c.hash_after or "")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, as an approval's subject lists it (the diff is already redacted)."""
        c = self.change
        return {
            "key": c.key,
            "kind": c.kind,
            "name": c.name,
            "action": c.action.value,
            "rule": self.rule,
            "reasons": [r.message for r in c.reasons],
            "diff": [d.model_dump(mode="json") for d in c.diff],
            "hashBefore": c.hash_before,
            "hashAfter": c.hash_after,
        }


def rules_of(gateway: Gateway | None) -> list[ApprovalRule]:
    """The Gateway's plan approval rules (none without a Gateway)."""
    return list(gateway.spec.approvals.rules) if gateway is not None else []


def _rule_label(rule: ApprovalRule, index: int) -> str:
    return rule.name or f"rules[{index}]"


def _under(path: str, field: str) -> bool:
    field = field.strip().rstrip(".")
    return path == field or path.startswith((field + ".", field + "["))


def _matches(rule: ApprovalRule, change: Change, labels: Mapping[str, str]) -> bool:
    if rule.kinds is not None and change.kind.lower() not in {k.lower() for k in rule.kinds}:
        return False
    if rule.actions is not None and change.action.value not in {a.value for a in rule.actions}:
        return False
    if rule.names is not None and not any(glob_matches(p, change.name) for p in rule.names):
        return False
    if rule.selector is not None and any(labels.get(k) != v for k, v in rule.selector.match_labels.items()):
        return False
    return rule.fields is None or any(_under(d.path, f) for d in change.diff for f in rule.fields)


def _labels(change: Change, desired: DesiredState, observed: ObservedState) -> Mapping[str, str]:
    current = desired.resources.get(change.key)
    if current is not None:
        return current.resource.metadata.labels
    record = observed.resources.get(change.key)
    labels = record.status.get("labels") if record is not None else None
    return labels if isinstance(labels, dict) else {}


def held_actions(
    plan: Plan, desired: DesiredState, observed: ObservedState, rules: Sequence[ApprovalRule]
) -> list[HeldAction]:
    """The plan's actions that some rule holds, in plan order (the first matching rule names it)."""
    if not rules:
        return []
    held = []
    for change in plan.changes:
        if change.action is ActionType.NOOP or not any(r.code in SOURCE_REASONS for r in change.reasons):
            continue
        labels = _labels(change, desired, observed)
        for index, rule in enumerate(rules):
            if _matches(rule, change, labels):
                shown = _with_removal(change, observed)
                held.append(HeldAction(shown, _rule_label(rule, index), rule.ttl_ms))
                break
    return held


def _with_removal(change: Change, observed: ObservedState) -> Change:
    """A delete, with what it removes as its diff (the spec as last applied, already redacted)."""
    record = observed.resources.get(change.key)
    if change.action is not ActionType.DELETE or record is None or change.diff:
        return change
    removed = [FieldChange(path=f"spec.{k}", op="removed", before=v) for k, v in sorted(record.spec.items())]
    return change.model_copy(update={"diff": removed})


def fingerprint(held: Sequence[HeldAction]) -> str:
    """A hash of exactly what is held: a later commit that changes any of it changes the hash."""
    doc = json.dumps(sorted(h.identity for h in held), separators=(",", ":"))
    return hashlib.sha256(doc.encode()).hexdigest()[:16]
