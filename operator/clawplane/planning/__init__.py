"""Planning: a pure plan of what apply will do, with redacted diffs and reasons."""

from clawplane.planning.plan import (
    FORMAT_VERSION,
    ActionType,
    Change,
    FieldChange,
    Plan,
    Reason,
    ReasonCode,
    RenderProblem,
)
from clawplane.planning.planner import PlanMemo, make_plan
from clawplane.planning.text import render_plan

__all__ = [
    "FORMAT_VERSION",
    "ActionType",
    "Change",
    "FieldChange",
    "Plan",
    "PlanMemo",
    "Reason",
    "ReasonCode",
    "RenderProblem",
    "make_plan",
    "render_plan",
]
