"""Models → Kubernetes CustomResourceDefinitions (apiextensions.k8s.io/v1).

The schema of each CRD is the kind's JSON Schema (``jsonschema``, OpenClaw's keys under
``spec`` included, with OpenClaw's descriptions for ``kubectl explain``) in Kubernetes'
*structural* dialect (``structural``): a ``type`` on every node, no ``$ref``, no ``const``,
OpenAPI 3.0 ``nullable`` instead of "X or null", and boolean ``exclusiveMinimum``. Unions
that Kubernetes cannot express (a literal or a ``valueFrom`` mapping) keep their values with
``x-kubernetes-preserve-unknown-fields``; the operator validates them with the same models
as the CLI, so nothing is lost.

Size: each CRD stays under 256 KiB of JSON, so that a client-side ``kubectl apply``, which
keeps the whole object in its last-applied annotation (at most 262144 bytes), still works;
titles are left out (a title stands in for a missing description), nothing else is shortened.

Two rules of the API server shape the root: ``metadata`` may say nothing but
``type: object`` (apiextensions compares it, extensions included, with an empty schema
and refuses the CRD otherwise), and the root allows no ``additionalProperties``.
Defaults are not put into the schema: the API server would write them into every stored
object, and an absent field must stay absent (it means "OpenClaw's default" when
rendering); the models apply them, and the description says what they are.
"""

from __future__ import annotations

from typing import Any

from clawplane.models import API_GROUP, KINDS
from clawplane.schema.jsonschema import kind_schema
from clawplane.schema.structural import PRESERVE, Structural

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


_CEL_RULES: dict[str, list[dict[str, Any]]] = {
    # The single-object rules of McpServerSpec._transport_needs that CEL can say, worded as
    # `clawplane validate` words them, so `kubectl apply` refuses what `validate` refuses.
    # size() rather than trim(): its cost does not grow with the string (a rule's cost is budgeted).
    "McpServer": [
        {
            "rule": "!has(self.transport) || self.transport != 'stdio'"
            " || (has(self.command) && size(self.command) > 0)",
            "message": '"stdio" transport requires a non-empty command',
            "fieldPath": ".command",
            "reason": "FieldValueRequired",
        },
        {
            "rule": "!has(self.transport) || self.transport == 'stdio'"
            " || (has(self.url) && size(self.url) > 0)",
            "messageExpression": "'\"' + self.transport + '\" transport requires a url'",
            "fieldPath": ".url",
            "reason": "FieldValueRequired",
        },
        {
            "rule": "has(self.transport) || has(self.type) || has(self.command) || has(self.url)",
            "message": "an MCP server needs a command (stdio) or a url (sse/streamable-http)",
        },
    ],
}
"""CEL rules (``x-kubernetes-validations``) on each kind's ``spec``."""


def crd(kind: str) -> dict[str, Any]:
    """The CRD of one kind."""
    cls = KINDS[kind]
    schema = kind_schema(kind)
    body = {k: v for k, v in schema.items() if k not in ("$defs", "$schema", "$id", "title")}
    props = dict(body["properties"])
    props["status"] = {
        "type": "object",
        "additionalProperties": True,
        "description": "Observed state, written by the operator.",
    }
    props.pop("metadata", None)
    open_api = Structural(schema.get("$defs", {})).node({**body, "properties": props})
    open_api.pop(PRESERVE, None)
    # Exactly this, or the API server refuses the CRD (see the module docstring).
    open_api["properties"] = {"metadata": {"type": "object"}, **open_api["properties"]}
    open_api["required"] = [r for r in open_api.get("required", []) if r != "metadata"]
    if kind in _CEL_RULES:
        open_api["properties"]["spec"]["x-kubernetes-validations"] = _CEL_RULES[kind]
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
