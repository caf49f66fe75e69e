"""Field-level differences between two redacted specs (deepdiff underneath)."""

from __future__ import annotations

from typing import Any

from clawplane.planning.plan import FieldChange


def _path(parts: list[Any]) -> str:
    out = "spec"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def field_changes(before: dict[str, Any], after: dict[str, Any]) -> list[FieldChange]:
    """Added, removed and changed fields from ``before`` to ``after``, in path order."""
    # Imported here: deepdiff pulls in numpy (~70 ms), and most commands (status, down, run's
    # start-up) import the planner without ever diffing a changed resource.
    from deepdiff import DeepDiff

    diff = DeepDiff(before, after, verbose_level=2, ignore_order=False)
    out: list[FieldChange] = []
    for kind, op in (
        ("dictionary_item_added", "added"),
        ("iterable_item_added", "added"),
        ("dictionary_item_removed", "removed"),
        ("iterable_item_removed", "removed"),
        ("values_changed", "changed"),
        ("type_changes", "changed"),
    ):
        for item in diff.tree.get(kind, []):
            path = _path(item.path(output_format="list"))
            before_value = None if op == "added" else item.t1
            after_value = None if op == "removed" else item.t2
            out.append(FieldChange(path=path, op=op, before=before_value, after=after_value))
    return sorted(out, key=lambda c: c.path)
