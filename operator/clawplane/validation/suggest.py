"""Field names allowed at a path of a resource, for "did you mean" hints."""

from __future__ import annotations

from functools import cache
from typing import Any

from clawplane._utils.didyoumean import did_you_mean
from clawplane.models import KINDS


@cache
def _schema(kind: str) -> dict[str, Any]:
    return KINDS[kind].model_json_schema(by_alias=True)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _object_branches(schema: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    node = _resolve(schema, node)
    branches = [node] if "properties" in node or "additionalProperties" in node else []
    for combo in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(combo, []):
            branches.extend(_object_branches(schema, sub))
    return branches


def allowed_fields(kind: str, path: tuple[str | int, ...]) -> list[str]:
    """Property names allowed in the object at ``path`` of a ``kind`` resource."""
    if kind not in KINDS:
        return []
    schema = _schema(kind)
    nodes = [schema]
    for part in path:
        nxt: list[dict[str, Any]] = []
        for node in nodes:
            for branch in _object_branches(schema, node):
                if isinstance(part, int):
                    if "items" in branch:
                        nxt.append(branch["items"])
                elif part in branch.get("properties", {}):
                    nxt.append(branch["properties"][part])
                elif isinstance(branch.get("additionalProperties"), dict):
                    nxt.append(branch["additionalProperties"])
            for combo in ("anyOf", "oneOf"):
                for sub in _resolve(schema, node).get(combo, []):
                    sub = _resolve(schema, sub)
                    if isinstance(part, int) and "items" in sub:
                        nxt.append(sub["items"])
        nodes = nxt
    names: list[str] = []
    for node in nodes:
        for branch in _object_branches(schema, node):
            names.extend(n for n in branch.get("properties", {}) if n not in names)
    return names


__all__ = ["allowed_fields", "did_you_mean"]
