"""The plan as data: what apply will do, to which resource, and why.

A ``Plan`` is a pydantic model with a ``format_version`` so the JSON form is a stable
interface (saved plans, CI tooling). Human rendering lives in ``planning.text`` and is
made from this same object. Every change carries reasons with stable codes and a
field diff that was computed from redacted specs, so a plan never holds a secret.
"""

from __future__ import annotations

import enum
import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

FORMAT_VERSION = 1


class ActionType(enum.StrEnum):
    """What apply does to one resource or output."""

    CREATE = "create"
    REPLACE = "replace"  # stop and start again (a runtime restart)
    UPDATE = "update"  # change in place (re-render, re-probe, record)
    DELETE = "delete"
    NOOP = "noop"


class ReasonCode(enum.StrEnum):
    """Why a change is planned."""

    NEW = "new-resource"
    SPEC_CHANGED = "spec-changed"
    SECRET_CHANGED = "secret-changed"
    SKILLS_CHANGED = "skills-changed"
    REMOVED = "removed-from-source"
    RUNTIME_MISSING = "runtime-missing"
    RUNTIME_CRASHED = "runtime-crashed"
    RUNTIME_PAUSED_EXPIRED = "pause-expired"
    TOOLS_DRIFTED = "tools-drifted"
    NOT_DISCOVERED = "tools-not-discovered"
    MODELS_NOT_DISCOVERED = "models-not-discovered"
    DISABLED = "disabled"
    OUTPUT_CHANGED = "output-changed"
    OUTPUT_MISSING = "output-missing"
    OUTPUT_STALE = "output-no-longer-rendered"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Reason(_Frozen):
    """One reason for a change: a stable code and a human message."""

    code: ReasonCode
    message: str


class FieldChange(_Frozen):
    """One changed field, with redacted values."""

    path: str
    op: str  # added | removed | changed
    before: Any = None
    after: Any = None


class Change(_Frozen):
    """The planned action for one resource (``Kind/name``) or output (``Output/path``)."""

    key: str
    kind: str
    name: str
    action: ActionType
    reasons: list[Reason] = Field(default_factory=list)
    diff: list[FieldChange] = Field(default_factory=list)
    hash_before: str | None = None
    hash_after: str | None = None


class PlanWarning(_Frozen):
    """Something apply will not fix but the user should know (e.g. a model its provider does not list)."""

    code: str
    key: str
    message: str
    path: str = ""
    hint: str = ""


class Summary(_Frozen):
    """Counts as in "N to add, M to change, K to destroy"."""

    add: int
    change: int
    destroy: int
    unchanged: int


class RenderProblem(_Frozen):
    """Something a rendered config cannot express (e.g. a file-backed secret openclaw.json cannot use)."""

    severity: str
    code: str
    message: str
    resource: str | None = None
    path: str | None = None
    hint: str | None = None

    def text(self) -> str:
        """One line: where, severity, code, message."""
        where = f"{self.resource}: " if self.resource else ""
        at = f" (at {self.path})" if self.path else ""
        hint = f"; {self.hint}" if self.hint else ""
        return f"{where}{self.severity}[{self.code}]: {self.message}{at}{hint}"


class Plan(_Frozen):
    """Everything one apply would do, computed purely from desired and observed state."""

    format_version: int = FORMAT_VERSION
    created_at: str
    folder: str
    desired_fingerprint: str
    observed_fingerprint: str
    changes: list[Change]
    outputs: list[Change] = Field(default_factory=list)
    mass_delete: bool = False
    render_problems: list[RenderProblem] = Field(default_factory=list)
    """What the rendered configs will leave out or cannot express (not blocking: apply writes the rest)."""
    warnings: list[PlanWarning] = Field(default_factory=list)

    @property
    def actionable(self) -> list[Change]:
        """Changes that do something (resources first, then outputs)."""
        return [c for c in [*self.changes, *self.outputs] if c.action is not ActionType.NOOP]

    @property
    def has_changes(self) -> bool:
        """True when apply would do anything."""
        return bool(self.actionable)

    def summary(self) -> Summary:
        """Resource counts (outputs follow from resources and are not counted)."""
        counts = {a: 0 for a in ActionType}
        for change in self.changes:
            counts[change.action] += 1
        return Summary(
            add=counts[ActionType.CREATE],
            change=counts[ActionType.REPLACE] + counts[ActionType.UPDATE],
            destroy=counts[ActionType.DELETE],
            unchanged=counts[ActionType.NOOP],
        )

    def plan_hash(self) -> str:
        """A hash of what the plan does (not when it was made, nor what it warns about)."""
        doc = self.model_dump(mode="json", exclude={"created_at", "warnings"})
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> str:
        """The plan as indented JSON."""
        doc = self.model_dump(mode="json")
        doc["summary"] = self.summary().model_dump()
        doc["plan_hash"] = self.plan_hash()
        return json.dumps(doc, indent=2)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        """Parse a saved plan (extra keys written by ``to_json`` are ignored)."""
        doc = json.loads(text)
        if not isinstance(doc, dict):
            raise ValueError("a saved plan is a JSON object")
        version = doc.get("format_version")
        if version != FORMAT_VERSION:
            raise ValueError(
                f"saved plan has format_version {version!r}; this clawplane reads {FORMAT_VERSION}"
            )
        doc.pop("summary", None)
        doc.pop("plan_hash", None)
        return cls.model_validate(doc)
