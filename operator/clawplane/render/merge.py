"""Merging the Gateway's raw ``spec.config`` under the config rendered from typed resources."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity

# Lists whose raw entries are kept and the rendered entries appended (both are rules, in order).
_APPEND_LISTS = frozenset({("bindings",)})


def merge_raw_config(
    raw: Mapping[str, Any], rendered: Mapping[str, Any], *, resource: str
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """``raw`` deep-merged with ``rendered`` on top; a rendered value wins a conflict, with a warning."""
    diagnostics: list[Diagnostic] = []
    merged = _merge(copy.deepcopy(dict(raw)), rendered, (), resource, diagnostics)
    return merged, diagnostics


def _merge(
    base: dict[str, Any],
    over: Mapping[str, Any],
    path: tuple[str, ...],
    resource: str,
    diagnostics: list[Diagnostic],
) -> dict[str, Any]:
    for key, value in over.items():
        here = (*path, key)
        if key not in base:
            base[key] = copy.deepcopy(value)
        elif isinstance(base[key], dict) and isinstance(value, Mapping):
            base[key] = _merge(base[key], value, here, resource, diagnostics)
        elif here in _APPEND_LISTS and isinstance(base[key], list) and isinstance(value, list):
            base[key] = base[key] + [item for item in value if item not in base[key]]
        elif base[key] != value:
            dotted = ".".join(here)
            diagnostics.append(
                Diagnostic(
                    Severity.WARNING,
                    "render.config-overridden",
                    f"spec.config sets {dotted}, which clawplane renders from resources; rendered wins",
                    path="spec.config." + dotted,
                    hint="set it through the typed fields (or remove it from spec.config)",
                    resource=resource,
                )
            )
            base[key] = copy.deepcopy(value)
    return base
