"""Rotating the hosted endpoint's tokens: new tokens, rewritten configs, the old ones refused.

Used by the supervisor (control operation ``rotate-tokens``) and by ``clawplane token
rotate`` when no supervisor runs; either way the rendered configs that carry a rotated
token are rewritten in the same step, so consumers that reload them keep working.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from clawplane.reconcile.engine import Engine, InvalidFolderError
from clawplane.reconcile.rendered.writing import write_outputs
from clawplane.state import StateDB, tokens

__all__ = ["RotateResult", "rotate"]


@dataclass
class RotateResult:
    """What a rotation did."""

    rotated: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (no token values)."""
        return {"ok": True, "rotated": self.rotated, "written": self.written, "note": self.note}


def rotate(engine: Engine, db: StateDB, consumers: Iterable[str] | None) -> RotateResult:
    """Rotate the tokens of ``consumers`` (all when None) and rewrite the configs that carry them."""
    result = RotateResult(rotated=tokens.rotate_tokens(db, consumers))
    if not result.rotated:
        return result
    try:
        desired, _ = engine.load()
    except InvalidFolderError as exc:
        result.note = (
            f"the folder does not validate ({exc}), so the rendered configs still carry the old tokens; "
            "fix the folder and run `clawplane apply` to write them"
        )
        return result
    written, _ = write_outputs(desired, db, engine.renderer, engine.ws.out_dir)
    result.written = written
    return result
