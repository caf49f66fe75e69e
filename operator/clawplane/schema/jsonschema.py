"""Models → JSON Schema (draft 2020-12): one file per kind plus a combined one.

The combined schema picks the kind's schema by the ``kind`` field (and accepts
``kind: List`` of resources), so editors and third-party validators such as
check-jsonschema can validate any clawplane file with a single schema.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from clawplane.models import API_VERSION, KINDS
from clawplane.models.base import Model
from clawplane.models.descriptions import describe_models

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_BASE = "https://clawplane.dev/schemas/v1alpha1"
COMBINED_FILE = "clawplane.schema.json"


def kind_file(kind: str) -> str:
    """File name of one kind's schema."""
    return f"{kind.lower()}.schema.json"


def _all_defs() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    describe_models(Model)
    keys: list[tuple[type[BaseModel], JsonSchemaMode]] = [(cls, "validation") for cls in KINDS.values()]
    refs, schema = models_json_schema(keys, by_alias=True, ref_template="#/$defs/{model}")
    defs: dict[str, Any] = schema.get("$defs", {})
    roots = {cls.KIND: refs[(cls, "validation")] for cls in KINDS.values()}
    return defs, roots


def _polish(node: Any) -> Any:
    """Drop pydantic's auto titles and tighten what the models express loosely."""
    if isinstance(node, dict):
        out = {k: _polish(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
        props = out.get("properties")
        if isinstance(props, dict):
            out["properties"] = {k: _polish(v) for k, v in node["properties"].items()}
        return out
    if isinstance(node, list):
        return [_polish(v) for v in node]
    return node


def _reachable(defs: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.rsplit("/", 1)[-1]
                if name not in seen:
                    seen[name] = defs[name]
                    stack.append(defs[name])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return dict(sorted(seen.items()))


def kind_schema(kind: str) -> dict[str, Any]:
    """The standalone JSON Schema of one kind."""
    defs, roots = _all_defs()
    root = copy.deepcopy(roots[kind])
    own = _reachable(defs, root)
    body = _polish(own.pop(root["$ref"].rsplit("/", 1)[-1]))
    body = {
        "$schema": DRAFT,
        "$id": f"{SCHEMA_BASE}/{kind_file(kind)}",
        "title": f"clawplane {kind}",
        **{k: v for k, v in body.items()},
    }
    if own:
        body["$defs"] = _polish(own)
    return body


def combined_schema() -> dict[str, Any]:
    """One schema for any clawplane document, dispatching on ``kind``."""
    defs, roots = _all_defs()
    kinds = list(KINDS)
    branches: list[dict[str, Any]] = [
        {
            "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
            "then": {"$ref": roots[kind]["$ref"]},
        }
        for kind in kinds
    ]
    branches.append(
        {
            "if": {"properties": {"kind": {"const": "List"}}, "required": ["kind"]},
            "then": {
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"const": "List"},
                    "items": {"type": "array", "items": {"$ref": "#"}},
                    "metadata": {"type": "object"},
                },
                "required": ["items"],
                "additionalProperties": False,
            },
        }
    )
    return {
        "$schema": DRAFT,
        "$id": f"{SCHEMA_BASE}/{COMBINED_FILE}",
        "title": "clawplane resource",
        "description": f"Any {API_VERSION} resource, or a List of them; the schema is chosen by kind.",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": [*kinds, "List"]}},
        "allOf": branches,
        "$defs": _polish(dict(sorted(defs.items()))),
    }


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every generated schema by file name."""
    out = {kind_file(kind): kind_schema(kind) for kind in KINDS}
    out[COMBINED_FILE] = combined_schema()
    return out
