"""Kubernetes-style status conditions, with transition times kept when nothing changed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clawplane.state import utcnow

CONDITION_TYPES = ("Accepted", "ResolvedRefs", "Programmed", "ToolsDiscovered", "ModelsDiscovered", "Ready")


@dataclass(frozen=True, slots=True)
class Cond:
    """One condition as computed now."""

    type: str
    status: bool | None
    """None: Unknown (nothing could check it, e.g. a provider that is not probed)."""
    reason: str
    message: str = ""


def merge(prior: Sequence[dict[str, Any]], now: Sequence[Cond], *, generation: int) -> list[dict[str, Any]]:
    """Conditions as stored: lastTransitionTime changes only when the status does."""
    before = {c.get("type"): c for c in prior}
    out = []
    for cond in now:
        status = "Unknown" if cond.status is None else "True" if cond.status else "False"
        old = before.get(cond.type)
        changed = old is None or old.get("status") != status
        out.append(
            {
                "type": cond.type,
                "status": status,
                "reason": cond.reason,
                "message": cond.message,
                "observedGeneration": generation,
                "lastTransitionTime": utcnow()
                if changed or old is None
                else old.get("lastTransitionTime", utcnow()),
            }
        )
    return out


def ready_of(conditions: Sequence[dict[str, Any]]) -> bool:
    """True when the Ready condition is True."""
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
