"""Models → JSON Schema (draft 2020-12): one file per kind plus a combined one.

The combined schema picks the kind's schema by the ``kind`` field (and accepts
``kind: List`` of resources), so editors and third-party validators such as
check-jsonschema can validate any clawplane file with a single schema.

Each kind's ``spec`` also carries OpenClaw's keys for the object it stands for, with
OpenClaw's titles and descriptions (``openclawparts``); OpenClaw subschemas that repeat
are written once under ``$defs`` (``sharing``).
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any, get_args

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from clawplane.models import API_VERSION, KINDS, Model, OpenPart, ValueFrom, describe_models
from clawplane.schema.openclawjson import is_openclaw
from clawplane.schema.openclawparts import Catalog, Placer
from clawplane.schema.sharing import share

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_BASE = "https://clawplane.dev/schemas/v1alpha1"
COMBINED_FILE = "clawplane.schema.json"


def kind_file(kind: str) -> str:
    """File name of one kind's schema."""
    return f"{kind.lower()}.schema.json"


def _model_classes() -> list[type[BaseModel]]:
    """Every model a kind is made of (and ``ValueFrom``, which OpenClaw's strings accept)."""
    found: list[type[BaseModel]] = []
    stack: list[Any] = [*KINDS.values(), ValueFrom]
    while stack:
        item = stack.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            if item in found:
                continue
            found.append(item)
            stack.extend(info.annotation for info in item.model_fields.values())
        else:
            stack.extend(get_args(item))
    return found


@cache
def _catalog() -> tuple[Catalog, dict[str, str]]:
    describe_models(Model)
    classes = _model_classes()
    keys: list[tuple[type[BaseModel], JsonSchemaMode]] = [(cls, "validation") for cls in classes]
    refs, schema = models_json_schema(keys, by_alias=True, ref_template="#/$defs/{model}")
    defs: dict[str, Any] = _polish(schema.get("$defs", {}))
    names = {cls: refs[(cls, "validation")]["$ref"].rsplit("/", 1)[-1] for cls in classes}
    parts: dict[str, frozenset[str]] = {
        names[cls]: getattr(cls, "OWN", frozenset()) for cls in classes if issubclass(cls, OpenPart)
    }
    roots = {cls.KIND: names[cls] for cls in KINDS.values()}
    return Catalog(defs, parts), roots


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


@cache
def _bodies() -> dict[str, dict[str, Any]]:
    """Each kind's schema with OpenClaw's keys placed (its references to definitions left as they are)."""
    catalog, roots = _catalog()
    bodies: dict[str, dict[str, Any]] = {}
    for kind, name in roots.items():
        body = dict(catalog.defs[name])
        props = dict(body["properties"])
        props["spec"] = Placer(catalog, kind).spec(props["spec"])
        body["properties"] = props
        bodies[kind] = body
    return bodies


def _reachable(defs: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    stack: list[Any] = [root]
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


@cache
def _kind_schema(kind: str) -> dict[str, Any]:
    catalog, _ = _catalog()
    body = _bodies()[kind]
    doc: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": f"{SCHEMA_BASE}/{kind_file(kind)}",
        "title": f"clawplane {kind}",
        **body,
    }
    own = _reachable(catalog.defs, body)
    if own:
        doc["$defs"] = own
    return share(doc, candidate=is_openclaw)


def kind_schema(kind: str) -> dict[str, Any]:
    """The standalone JSON Schema of one kind (a copy: the caller may change it)."""
    return copy.deepcopy(_kind_schema(kind))


@cache
def _combined_schema() -> dict[str, Any]:
    catalog, roots = _catalog()
    defs = dict(catalog.defs)
    for kind, body in _bodies().items():
        defs[roots[kind]] = body
    kinds = list(KINDS)
    branches: list[dict[str, Any]] = [
        {
            "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
            "then": {"$ref": f"#/$defs/{roots[kind]}"},
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
    doc: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": f"{SCHEMA_BASE}/{COMBINED_FILE}",
        "title": "clawplane resource",
        "description": f"Any {API_VERSION} resource, or a List of them; the schema is chosen by kind.",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": [*kinds, "List"]}},
        "allOf": branches,
    }
    doc["$defs"] = _reachable(defs, doc)
    return share(doc, candidate=is_openclaw)


def combined_schema() -> dict[str, Any]:
    """One schema for any clawplane document, dispatching on ``kind`` (a copy: the caller may change it)."""
    return copy.deepcopy(_combined_schema())


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every generated schema by file name."""
    out = {kind_file(kind): kind_schema(kind) for kind in KINDS}
    out[COMBINED_FILE] = combined_schema()
    return out
