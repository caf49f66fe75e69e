"""Models → Kubernetes CustomResourceDefinitions (apiextensions.k8s.io/v1).

Kubernetes requires *structural* schemas: a ``type`` on every node, no ``$ref``,
no ``const``, OpenAPI 3.0 ``nullable`` instead of "X or null", and boolean
``exclusiveMinimum``. Unions that Kubernetes cannot express (a literal or a
``valueFrom`` mapping) keep their values with ``x-kubernetes-preserve-unknown-fields``;
the operator validates them with the same models as the CLI, so nothing is lost.

Two rules of the API server shape the root: ``metadata`` may say nothing but
``type: object`` (apiextensions compares it, extensions included, with an empty schema
and refuses the CRD otherwise), and the root allows no ``additionalProperties``.
Defaults are not put into the schema: the API server would write them into every stored
object, and an absent field must stay absent (it means "OpenClaw's default" when
rendering); the models apply them, and the description says what they are.
"""

from __future__ import annotations

import json
from typing import Any

from clawplane.models import API_GROUP, KINDS
from clawplane.schema.jsonschema import kind_schema

VERSION = "v1alpha1"

_PRINTER_COLUMNS: dict[str, list[dict[str, Any]]] = {
    "McpServer": [
        {"name": "Transport", "type": "string", "jsonPath": ".spec.transport"},
        {"name": "Tools", "type": "integer", "jsonPath": ".status.toolCount"},
    ],
    "ModelProvider": [
        {"name": "API", "type": "string", "jsonPath": ".spec.api"},
        {"name": "Models", "type": "integer", "jsonPath": ".status.modelCount"},
    ],
    "Agent": [
        {"name": "Skills", "type": "integer", "jsonPath": ".status.skills"},
        {"name": "Prompt-Chars", "type": "integer", "jsonPath": ".status.promptChars", "priority": 1},
    ],
    "Channel": [
        {"name": "Type", "type": "string", "jsonPath": ".spec.type"},
        {"name": "DM-Policy", "type": "string", "jsonPath": ".spec.dmPolicy"},
    ],
    "Skill": [{"name": "Description", "type": "string", "jsonPath": ".spec.description", "priority": 1}],
    "Gateway": [],
}
_COMMON_COLUMNS = [
    {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
    {
        "name": "Reason",
        "type": "string",
        "jsonPath": '.status.conditions[?(@.type=="Ready")].reason',
        "priority": 1,
    },
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]
_DROP = {"title", "$schema", "$id", "examples", "additionalProperties", "$defs"}
# The fields of apiextensions' JSONSchemaProps a structural schema may use; anything else (e.g.
# JSON Schema's propertyNames) is an unknown field the API server refuses or drops.
_KEPT = {
    "description", "type", "format", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "multipleOf", "enum", "maxProperties",
    "minProperties", "required", "items", "allOf", "oneOf", "anyOf", "not", "properties",
    "externalDocs", "example", "nullable",
}  # fmt: skip


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target = dict(defs[node["$ref"].rsplit("/", 1)[-1]])
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return _inline({**target, **extra}, defs)
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _structural(node: dict[str, Any]) -> dict[str, Any]:
    """Rewrite one inlined JSON Schema node into Kubernetes' structural dialect."""
    union = node.get("anyOf") or node.get("oneOf")
    if union is not None:
        return _union(node, union)
    out: dict[str, Any] = {}
    for key, value in node.items():
        kept = key in _KEPT or key in ("const", "exclusiveMinimum", "exclusiveMaximum")
        if key in _DROP or not (kept or key.startswith("x-kubernetes-")):
            continue  # including default (see the module docstring) and propertyNames
        if key == "const":
            out["enum"] = [value]
        elif key == "exclusiveMinimum":
            out["minimum"], out["exclusiveMinimum"] = value, True
        elif key == "exclusiveMaximum":
            out["maximum"], out["exclusiveMaximum"] = value, True
        elif key == "properties":
            out["properties"] = {k: _structural(v) for k, v in value.items()}
        elif key == "items":
            out["items"] = _structural(value)
        else:
            out[key] = value
    if "default" in node:
        out["description"] = _with_default(out.get("description"), node["default"])
    addl = node.get("additionalProperties")
    if isinstance(addl, dict):
        out["additionalProperties"] = _structural(addl)
    elif addl is True and "properties" not in node:
        out["x-kubernetes-preserve-unknown-fields"] = True
    if out.get("type") == "object" and "properties" not in out and "additionalProperties" not in out:
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out


def _with_default(description: str | None, default: Any) -> str:
    """The description with the model's default appended (the schema itself carries none)."""
    text = (description or "").rstrip()
    shown = json.dumps(default, ensure_ascii=False)
    if shown in ("[]", "{}") or "default" in text.lower():
        return text
    return f"{text} Default: {shown}.".strip()


def _union(node: dict[str, Any], branches: list[dict[str, Any]]) -> dict[str, Any]:
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "default")}
    non_null = [b for b in branches if b.get("type") != "null"]
    nullable = len(non_null) < len(branches)
    if len(non_null) == 1:
        inner = _structural({**non_null[0], **{k: v for k, v in rest.items() if k == "description"}})
        if nullable:
            inner["nullable"] = True
        if "default" in node and node["default"] is not None:
            inner["description"] = _with_default(inner.get("description"), node["default"])
        return inner
    flat = [_structural(b) for b in non_null]
    types = {b.get("type") for b in flat}
    out: dict[str, Any] = {"description": rest["description"]} if "description" in rest else {}
    if len(types) == 1 and None not in types:
        merged: dict[str, Any] = {**out, "type": types.pop()}
        if merged["type"] == "array":
            merged["items"] = {"x-kubernetes-preserve-unknown-fields": True}
        elif merged["type"] == "object":
            merged["x-kubernetes-preserve-unknown-fields"] = True
        result = merged
    elif types <= {"string", "integer"}:
        result = {**out, "x-kubernetes-int-or-string": True}
    else:
        result = {**out, "x-kubernetes-preserve-unknown-fields": True}
    if nullable:
        result["nullable"] = True
    return result


def crd(kind: str) -> dict[str, Any]:
    """The CRD of one kind."""
    cls = KINDS[kind]
    schema = kind_schema(kind)
    defs = schema.get("$defs", {})
    body = _inline({k: v for k, v in schema.items() if k != "$defs"}, defs)
    props = dict(body["properties"])
    props["status"] = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "description": "Observed state, written by the operator.",
    }
    props.pop("metadata", None)
    open_api = _structural({**body, "properties": props})
    open_api.pop("x-kubernetes-preserve-unknown-fields", None)
    # Exactly this, or the API server refuses the CRD (see the module docstring).
    open_api["properties"] = {"metadata": {"type": "object"}, **open_api["properties"]}
    open_api["required"] = [r for r in open_api.get("required", []) if r != "metadata"]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{cls.PLURAL}.{API_GROUP}",
            "labels": {"app.kubernetes.io/part-of": "clawplane"},
        },
        "spec": {
            "group": API_GROUP,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": cls.PLURAL,
                "singular": kind.lower(),
                "shortNames": list(cls.SHORT_NAMES),
                "categories": ["clawplane"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": _PRINTER_COLUMNS[kind] + _COMMON_COLUMNS,
                    "schema": {"openAPIV3Schema": open_api},
                }
            ],
        },
    }


def all_crds() -> dict[str, dict[str, Any]]:
    """Every CRD by file name."""
    return {f"{cls.PLURAL}.{API_GROUP}.yaml": crd(kind) for kind, cls in KINDS.items()}
