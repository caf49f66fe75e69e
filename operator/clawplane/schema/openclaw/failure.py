"""What the OpenClaw schema validator reports: ``Failure``, and the shape of a compiled ``Check``.

Apart from ``validator`` so that the keyword checks (``scalarchecks``) and the compiler share them
without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Check", "Failure", "Node", "PathT"]

Node = dict[str, Any]
PathT = tuple[str | int, ...]


@dataclass(slots=True)
class Failure:
    """One keyword a value failed, where, and (for unions) why each alternative failed."""

    keyword: str
    expected: Any
    """The keyword's value in the schema (the enum's values, the minimum, …)."""
    value: Any
    path: PathT
    schema: Node
    context: list[Failure] = field(default_factory=list)
    branch: int = -1
    """For a failure inside a union: which alternative it belongs to."""


Check = Callable[[Any, PathT, list[Failure]], bool]
