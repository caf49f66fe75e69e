"""Holding plan actions back for approval: what a pass or an apply carries out instead of the plan.

The Gateway's approval rules pick actions from the plan (``approvals.held_actions``) and the
approval queue decides which of them wait (``approvals.decide``). A waiting action must not
happen at all, not even in the rendered configs, so the pass plans again with every waiting
resource kept as it was last applied: a held create is left out, a held delete or change keeps
the resource as the supervisor last applied it (``AppliedSources``). What cannot be kept that
way (the supervisor restarted since, so it never applied the old version) is still not carried
out: its action is dropped from the plan, and the rendered files show the folder's version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from clawplane.approvals import ApprovalQueue, HeldAction, HoldDecision, decide, held_actions, rules_of
from clawplane.approvals.policy import SOURCE_REASONS
from clawplane.planning import ActionType, Reason
from clawplane.reconcile.engine import Engine, Planned
from clawplane.state import StateDB
from clawplane.validation import LoadedResource, ValidationResult

__all__ = ["AppliedSources", "HeldPlan", "hold_back"]


class AppliedSources:
    """The validated resources of the last applied pass, by key."""

    def __init__(self) -> None:
        self._items: dict[str, LoadedResource] = {}

    def remember(self, validation: ValidationResult) -> None:
        """What was just applied (including resources kept as they were)."""
        self._items = {item.key: item for item in validation.resources}

    def knows(self, key: str) -> bool:
        """Whether the last applied version of ``key`` is known."""
        return key in self._items

    def patch(self, validation: ValidationResult, waiting: Sequence[HeldAction]) -> ValidationResult:
        """``validation`` with every waiting resource as it was last applied (or absent, if new)."""
        actions = {h.change.key: h.change.action for h in waiting}
        resources = []
        for item in validation.resources:
            action = actions.get(item.key)
            if action is None:
                resources.append(item)
            elif action is not ActionType.CREATE:
                resources.append(self._items.get(item.key, item))
        present = {item.key for item in validation.resources}
        resources.extend(
            self._items[key]
            for key, action in actions.items()
            if action is ActionType.DELETE and key not in present and key in self._items
        )
        return replace(validation, resources=resources)


@dataclass(frozen=True, slots=True)
class HeldPlan:
    """The plan to carry out, and what the approval queue decided about the held actions."""

    planned: Planned
    decision: HoldDecision


def hold_back(
    engine: Engine,
    db: StateDB,
    planned: Planned,
    queue: ApprovalQueue,
    sources: AppliedSources,
    *,
    requested_by: str,
    approve_as: str | None = None,
) -> HeldPlan:
    """The plan without the actions that wait for an approval (see the module docstring)."""
    held = held_actions(planned.plan, planned.desired, planned.observed, rules_of(planned.desired.gateway))
    decision = decide(
        queue,
        held,
        # Only a request records the hash, and only held actions make one: an idle pass over a
        # large folder does not hash its plan.
        plan_hash=planned.plan.plan_hash() if held else "",
        requested_by=requested_by,
        folder=str(engine.ws.folder),
        approve_as=approve_as,
    )
    if not decision.waiting:
        return HeldPlan(planned, decision)
    kept = engine.plan(db, patch=lambda validation: sources.patch(validation, decision.waiting))
    waiting = decision.waiting_keys
    changes = [c for c in kept.plan.changes if c.key not in waiting or c.action is ActionType.NOOP
               or not _from_source(c.reasons)]  # fmt: skip
    plan = kept.plan.model_copy(update={"changes": changes})
    return HeldPlan(replace(kept, plan=plan), decision)


def _from_source(reasons: Sequence[Reason]) -> bool:
    return any(r.code in SOURCE_REASONS for r in reasons)
