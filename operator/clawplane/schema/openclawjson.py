"""OpenClaw's config schema nodes (draft-07) as draft 2020-12 schemas for clawplane's own files.

Three things change on the way, and nothing else (titles, descriptions, defaults and every
constraint stay as OpenClaw wrote them):

- draft-07 spellings that 2020-12 changed: a tuple ``items`` list is ``prefixItems`` (with
  ``additionalItems`` as ``items``), ``definitions`` is ``$defs``, ``dependencies`` splits into
  ``dependentRequired``/``dependentSchemas``; a nested ``$schema`` goes.
- A ``valueFrom`` reference may stand wherever OpenClaw takes a string (clawplane resolves it
  when it renders): such a value is ``anyOf: [OpenClaw's node, ValueFrom]``, with OpenClaw's
  title and description on the union so editors still show them.
- Only value positions take a reference: the branches of OpenClaw's own unions and the
  schemas of keys (``propertyNames``) are converted as they are.
"""

from __future__ import annotations

from typing import Any

from clawplane.schema.openclaw import Node, types_of

VALUE_FROM_REF = "#/$defs/ValueFrom"
"""Where the schema of a ``{valueFrom: …}`` reference lives in every generated file."""
ANNOTATIONS = ("title", "description")
_VALUE_MAPS = ("properties", "patternProperties", "dependentSchemas")
_VALUE_ONE = ("additionalProperties", "unevaluatedProperties", "contains")
_PLAIN_LISTS = ("anyOf", "oneOf", "allOf")
_PLAIN_ONE = ("propertyNames", "not", "if", "then", "else")

_cache: dict[tuple[int, bool], tuple[Node, Any]] = {}
_made: dict[int, Any] = {}


def convert(node: Any, *, value: bool = True) -> Any:
    """``node`` as draft 2020-12; a value position (``value``) that takes a string also takes a reference.

    OpenClaw's schema is read once and never changes, so conversions are kept by node identity:
    the same OpenClaw node converts to the same object wherever it is used (treat it as frozen).
    """
    if not isinstance(node, dict):
        return node
    key = (id(node), value)
    found = _cache.get(key)
    # The entry keeps its node alive, so no other node can come to have the same id.
    if found is None or found[0] is not node:
        made = _convert(node, value)
        found = _cache[key] = (node, made)
        _made[id(made)] = made
    return found[1]


def described(node: dict[str, Any], description: str) -> dict[str, Any]:
    """A converted node with a description of clawplane's (still OpenClaw's node: ``is_openclaw``)."""
    made = {"description": description, **node}
    _made[id(made)] = made
    return made


def is_openclaw(node: Any) -> bool:
    """Whether ``node`` is (unchanged) a conversion of one of OpenClaw's nodes."""
    return _made.get(id(node)) is node


def _convert(node: Node, value: bool) -> Any:
    out: dict[str, Any] = {}
    tuple_items = isinstance(node.get("items"), list)
    for key, sub in node.items():
        if key == "$schema":
            continue
        if key in _VALUE_MAPS or key in ("definitions", "$defs"):
            target = "$defs" if key == "definitions" else key
            out[target] = {k: convert(v, value=key in _VALUE_MAPS) for k, v in sub.items()}
        elif key == "items":
            if tuple_items:
                out["prefixItems"] = [convert(v) for v in sub]
            else:
                out["items"] = convert(sub)
        elif key == "additionalItems":
            if tuple_items:
                out["items"] = convert(sub)
        elif key == "dependencies" and isinstance(sub, dict):
            required = {k: v for k, v in sub.items() if isinstance(v, list)}
            schemas = {k: convert(v, value=False) for k, v in sub.items() if not isinstance(v, list)}
            if required:
                out["dependentRequired"] = required
            if schemas:
                out["dependentSchemas"] = schemas
        elif key in _VALUE_ONE:
            out[key] = convert(sub)
        elif key in _PLAIN_LISTS and isinstance(sub, list):
            out[key] = [convert(v, value=False) for v in sub]
        elif key in _PLAIN_ONE:
            out[key] = convert(sub, value=False)
        else:
            out[key] = sub
    if value and takes_string(node):
        return with_reference(out)
    return out


def takes_string(node: Node) -> bool:
    """Whether OpenClaw takes a string here (a node that takes anything already takes a reference)."""
    kinds = types_of(node)
    return bool(kinds) and "string" in kinds


def with_reference(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` or a ``valueFrom`` reference, with the node's title and description on the union."""
    notes = {k: node[k] for k in ANNOTATIONS if k in node}
    inner = {k: v for k, v in node.items() if k not in ANNOTATIONS}
    reference = {"$ref": VALUE_FROM_REF}
    if set(inner) <= {"anyOf", "default"} and isinstance(inner.get("anyOf"), list):
        # A union already: the reference joins its branches instead of nesting one more level.
        return {**notes, **inner, "anyOf": [*inner["anyOf"], reference]}
    return {**notes, "anyOf": [inner, reference]}


__all__ = [
    "ANNOTATIONS",
    "VALUE_FROM_REF",
    "convert",
    "described",
    "is_openclaw",
    "takes_string",
    "with_reference",
]
