"""Structural schemas: the invariants a CRD's ``openAPIV3Schema`` must keep.

Ported from k8s.io/apiextensions-apiserver ``pkg/apiserver/schema`` (``convert.go``
``NewStructural``, ``validation.go`` ``ValidateStructural``, ``complete.go``) and
``pkg/apiserver/schema/defaulting/validation.go`` (``ValidateDefaults``). Schemas stay the
plain dicts of the CRD; a node's keys split into the *structural* part (type, properties,
items, additionalProperties, extensions, description, ...) and *value validations*
(enum, pattern, anyOf, ...), whose nested schemas must not re-declare structure.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from tests.k8s.rules import fielderrors as fe
from tests.k8s.rules.fielderrors import FieldError

JSON = dict[str, Any]
ROOT, ITEM, FIELD = "root", "item", "field"

GENERIC = ("type", "description", "title", "nullable", "default", "externalDocs", "example")
EXTENSIONS = (
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
)
JUNCTORS = ("allOf", "anyOf", "oneOf")
VALUE_KEYS = (
    "format", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength",
    "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "enum", "maxProperties",
    "minProperties", "required", *JUNCTORS, "not",
)  # fmt: skip
UNSUPPORTED = {
    "id": "id",
    "$schema": "schema",
    "$ref": "$ref",
    "patternProperties": "patternProperties",
    "dependencies": "dependencies",
    "additionalItems": "additionalItems",
    "definitions": "definitions",
}
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]


class NotStructuralError(ValueError):
    """``NewStructural`` failed: the schema uses a field Kubernetes does not support."""


def check_convertible(node: Any) -> None:
    """``NewStructural``'s preconditions: no unsupported fields, ``items`` is one schema."""
    if not isinstance(node, dict):
        return
    for key, label in UNSUPPORTED.items():
        if node.get(key):
            raise NotStructuralError(f"OpenAPIV3Schema '{label}' is not supported")
    if isinstance(node.get("items"), list):
        raise NotStructuralError("OpenAPIV3Schema 'items' must be a schema, but is an array")
    if node.get("x-kubernetes-preserve-unknown-fields") is False:
        raise NotStructuralError("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined")
    for child in _children(node):
        check_convertible(child)


def _children(node: JSON) -> list[Any]:
    kids: list[Any] = list((node.get("properties") or {}).values())
    if isinstance(node.get("items"), dict):
        kids.append(node["items"])
    if isinstance(node.get("additionalProperties"), dict):
        kids.append(node["additionalProperties"])
    for junctor in JUNCTORS:
        kids.extend(node.get(junctor) or [])
    if isinstance(node.get("not"), dict):
        kids.append(node["not"])
    return kids


# --- ValidateStructural ---------------------------------------------------------------------------


def validate_structural(schema: JSON, path: str) -> list[FieldError]:
    """``ValidateStructural``: invariants plus completeness, sorted like upstream."""
    errs = _invariants(schema, ROOT, path) + _completeness(schema, schema, path, path)
    return sorted(errs, key=lambda e: e.text())


def _has(node: JSON, key: str) -> bool:
    """Whether a field is set (the Go zero value counts as unset)."""
    value = node.get(key)
    return value not in (None, False, "", [], {}) or (key == "default" and key in node)


def _additional(node: JSON) -> Any:
    """``s.AdditionalProperties``: None when absent; a bool or a schema otherwise."""
    return node.get("additionalProperties")


def _invariants(s: JSON, level: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    stype = s.get("type") or ""
    if stype == "array" and not isinstance(s.get("items"), dict):
        errs.append(fe.required(f"{path}.items", "must be specified"))
    if isinstance(s.get("items"), dict):
        errs += _invariants(s["items"], ITEM, f"{path}.items")
    for key, prop in (s.get("properties") or {}).items():
        errs += _invariants(prop, FIELD, f"{path}.properties[{key}]")
    addl = _additional(s)
    if addl is not None:
        if level == ROOT:
            errs.append(fe.forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(addl, dict):
            errs += _invariants(addl, FIELD, f"{path}.additionalProperties")
    int_or_string = bool(s.get("x-kubernetes-int-or-string"))
    preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if int_or_string and preserve:
        errs.append(
            fe.invalid(
                f"{path}.x-kubernetes-preserve-unknown-fields", True, "must be false if x-kubernetes-int-or-string is true"
            )
        )
    if int_or_string and embedded:
        errs.append(
            fe.invalid(
                f"{path}.x-kubernetes-embedded-resource", True, "must be false if x-kubernetes-int-or-string is true"
            )
        )
    skip_any_of = (s.get("anyOf") or []) == _INT_OR_STRING
    all_of = s.get("allOf") or []
    skip_first_all_of = bool(all_of) and (all_of[0].get("anyOf") or []) == _INT_OR_STRING
    errs += _value_validation(s, skip_any_of, skip_first_all_of, level, path)
    check_metadata = level == ROOT or embedded
    if embedded and stype != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(fe.required(f"{path}.type", detail) if not stype else fe.invalid(f"{path}.type", stype, detail))
    elif not stype and not int_or_string and not preserve:
        detail = {
            ROOT: "must not be empty at the root",
            ITEM: "must not be empty for specified array items",
            FIELD: "must not be empty for specified object fields",
        }[level]
        errs.append(fe.required(f"{path}.type", detail))
    if embedded and addl is not None:
        errs.append(
            fe.forbidden(f"{path}.additionalProperties", "must not be used if x-kubernetes-embedded-resource is set")
        )
    if level == ROOT and stype and stype != "object":
        errs.append(fe.invalid(f"{path}.type", stype, "must be object at the root"))
    props = s.get("properties") or {}
    for meta_key in ("kind", "apiVersion"):
        if meta_key in props and check_metadata and (props[meta_key].get("type") or "") != "string":
            errs.append(
                fe.invalid(f"{path}.properties[{meta_key}].type", props[meta_key].get("type") or "", "must be string")
            )
    if "metadata" in props:
        errs += _metadata_invariants(props["metadata"], check_metadata, level, f"{path}.properties[metadata]")
    if embedded and not preserve and not props:
        errs.append(
            fe.required(
                f"{path}.properties",
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            )
        )
    return errs


def _metadata_invariants(s: JSON, check_metadata: bool, level: str, path: str) -> list[FieldError]:
    """Root ``metadata`` may only restrict ``name``/``generateName``: anything else is forbidden.

    Upstream compares the node, with type, default and a name/generateName-only ``properties``
    cleared, against an empty schema, so a description or any extension fails too.
    """
    errs: list[FieldError] = []
    if check_metadata and s.get("type") != "object":
        errs.append(fe.invalid(f"{path}.type", s.get("type") or "", "must be object"))
    if level == ROOT:
        rest = {k: v for k, v in s.items() if k not in ("type", "default") and _has(s, k)}
        props = rest.get("properties") or {}
        if props and set(props) <= {"name", "generateName"}:
            rest.pop("properties")
        if rest:
            errs.append(
                fe.forbidden(
                    path,
                    "must not specify anything other than name and generateName, but metadata is implicitly specified",
                )
            )
    return errs


def _value_validation(s: JSON, skip_any_of: bool, skip_first_all_of: bool, level: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not skip_any_of:
        for i, sub in enumerate(s.get("anyOf") or []):
            errs += _nested(sub, False, level, f"{path}.anyOf[{i}]")
    for i, sub in enumerate(s.get("allOf") or []):
        errs += _nested(sub, skip_first_all_of and i == 0, level, f"{path}.allOf[{i}]")
    for i, sub in enumerate(s.get("oneOf") or []):
        errs += _nested(sub, False, level, f"{path}.oneOf[{i}]")
    if isinstance(s.get("not"), dict):
        errs += _nested(s["not"], False, level, f"{path}.not")
    pattern = s.get("pattern")
    if pattern:
        try:
            re.compile(pattern)
        except re.error as exc:
            errs.append(
                fe.invalid(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {exc}")
            )
    return errs


_NESTED_FORBIDDEN = (
    ("type", "must be empty to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


def _nested(v: JSON, skip_any_of: bool, level: str, path: str) -> list[FieldError]:
    """``validateNestedValueValidation``: a value-validation clause may not declare structure."""
    errs = _value_validation(v, skip_any_of, False, level, path)
    if isinstance(v.get("items"), dict):
        errs += _nested(v["items"], False, level, f"{path}.items")
    for key, prop in (v.get("properties") or {}).items():
        errs += _nested(prop, False, FIELD, f"{path}.properties[{key}]")
    for key, detail in _NESTED_FORBIDDEN:
        present = key in v if key == "default" else _has(v, key)
        if present:
            errs.append(fe.forbidden(f"{path}.{key}", detail))
    addl = v.get("additionalProperties")
    if addl is True or isinstance(addl, dict):
        errs.append(fe.forbidden(f"{path}.additionalProperties", "must be undefined to be structural"))
    if "metadata" in (v.get("properties") or {}):
        errs.append(fe.forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context"))
    return errs


def _completeness(v: JSON, s: JSON | None, s_path: str, v_path: str) -> list[FieldError]:
    """``validateStructuralCompleteness``: every value validation has a structural counterpart."""
    errs: list[FieldError] = []
    if isinstance(v.get("not"), dict):
        errs += _nested_completeness(v["not"], s, s_path, f"{v_path}.not")
    for junctor in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(v.get(junctor) or []):
            errs += _nested_completeness(sub, s, s_path, f"{v_path}.{junctor}[{i}]")
    return errs


def _nested_completeness(v: JSON, s: JSON | None, s_path: str, v_path: str) -> list[FieldError]:
    if s is None:
        return [fe.required(s_path, f"because it is defined in {v_path}")]
    errs = _completeness(v, s, s_path, v_path)
    if isinstance(v.get("items"), dict):
        items = s.get("items") if isinstance(s.get("items"), dict) else None
        errs += _nested_completeness(v["items"], items, f"{s_path}.items", f"{v_path}.items")
    for key, sub in (v.get("properties") or {}).items():
        structural = (s.get("properties") or {}).get(key)
        if structural is None:
            errs.append(
                fe.required(f"{s_path}.properties[{key}]", f"because it is defined in {v_path}.properties[{key}]")
            )
        else:
            errs += _nested_completeness(sub, structural, f"{s_path}.properties[{key}]", f"{v_path}.properties[{key}]")
    return errs


# --- pruning, defaulting, null pruning (pkg/apiserver/schema/pruning, defaulting) -----------------

META_FIELDS = ("apiVersion", "kind", "metadata")


def prune(value: Any, schema: JSON | None, *, resource_root: bool) -> list[str]:
    """``pruning.PruneWithOptions``: drop fields the schema does not specify; returns their paths."""
    if resource_root:
        schema = {**(schema or {}), "x-kubernetes-embedded-resource": True}
    pruned: list[str] = []
    _prune(value, schema, [], pruned)
    return sorted(pruned)


def _join(parts: list[str]) -> str:
    out = ""
    for part in parts:
        out += part if part.startswith("[") else (f".{part}" if out else part)
    return out


def _prune(x: Any, s: JSON | None, parents: list[str], pruned: list[str], *, keep_unknown: bool = False) -> None:
    """``prune`` and ``skipPrune``: below ``x-kubernetes-preserve-unknown-fields`` unknown keys stay."""
    if s is not None and s.get("x-kubernetes-preserve-unknown-fields"):
        keep_unknown = True
    elif not keep_unknown or s is None:
        keep_unknown = False
    if isinstance(x, dict):
        if s is None:
            pruned.extend(_join([*parents, key]) for key in x)
            x.clear()
            return
        props = s.get("properties") or {}
        addl = s.get("additionalProperties")
        for key in list(x):
            if s.get("x-kubernetes-embedded-resource") and key in META_FIELDS:
                continue
            if key in props:
                _prune(x[key], props[key], [*parents, key], pruned)
            elif isinstance(addl, dict) or (addl not in (None, False) and not keep_unknown):
                _prune(x[key], addl if isinstance(addl, dict) else None, [*parents, key], pruned)
            elif not keep_unknown:
                if key not in META_FIELDS or parents:
                    pruned.append(_join([*parents, key]))
                del x[key]
    elif isinstance(x, list):
        items = s.get("items") if s is not None else None
        for i, item in enumerate(x):
            if keep_unknown and not isinstance(items, dict):
                continue
            _prune(item, items if isinstance(items, dict) else None, [*parents, f"[{i}]"], pruned, keep_unknown=keep_unknown)


def prune_nulls(x: Any, s: JSON | None) -> None:
    """``PruneNonNullableNullsWithoutDefaults``: drop ``null`` where the schema neither allows nor defaults it."""
    if isinstance(x, dict):
        for key in list(x):
            sub = _schema_for(key, s)
            if x[key] is None and sub is not None and not sub.get("nullable") and "default" not in sub:
                del x[key]
            else:
                prune_nulls(x[key], sub)
    elif isinstance(x, list):
        items = s.get("items") if s is not None else None
        for item in x:
            prune_nulls(item, items if isinstance(items, dict) else None)


def _schema_for(key: str, s: JSON | None) -> JSON | None:
    if s is None:
        return None
    props = s.get("properties") or {}
    if key in props:
        return dict(props[key])
    addl = s.get("additionalProperties")
    return addl if isinstance(addl, dict) else None


def apply_defaults(x: Any, s: JSON | None) -> None:
    """``defaulting.Default``: fill absent (or non-nullable ``null``) fields from ``default``."""
    if s is None:
        return
    if isinstance(x, dict):
        props = s.get("properties") or {}
        for key, prop in props.items():
            if "default" not in prop:
                continue
            if key not in x or (x[key] is None and not prop.get("nullable")):
                x[key] = copy.deepcopy(prop["default"])
        addl = s.get("additionalProperties")
        for key in list(x):
            if key in props:
                apply_defaults(x[key], props[key])
            elif isinstance(addl, dict):
                if x[key] is None and not addl.get("nullable") and "default" in addl:
                    x[key] = copy.deepcopy(addl["default"])
                apply_defaults(x[key], addl)
    elif isinstance(x, list):
        items = s.get("items")
        if not isinstance(items, dict):
            return
        for i, item in enumerate(x):
            if item is None and not items.get("nullable") and "default" in items:
                x[i] = copy.deepcopy(items["default"])
            apply_defaults(x[i], items)


def validate_defaults(schema: JSON, path: str, validate: Any) -> list[FieldError]:
    """``ValidateDefaults``: every default must be pruned already and valid against its own node.

    ``validate(value, node, path)`` checks a value against a schema node (tests/k8s/rules/values.py).
    Defaults inside the root's metadata, kind and apiVersion are forbidden elsewhere.
    """
    return _defaults(schema, path, validate, inside_meta=False, root=True)


def _defaults(s: JSON, path: str, validate: Any, *, inside_meta: bool, root: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if "default" in s and not inside_meta:
        default = s["default"]
        pruned = copy.deepcopy(default)
        prune(pruned, s, resource_root=bool(s.get("x-kubernetes-embedded-resource")))
        if pruned != default:
            errs.append(fe.invalid(f"{path}.default", default, "must not have unknown fields"))
        else:
            errs += validate(default, s, f"{path}.default")
    if isinstance(s.get("items"), dict):
        errs += _defaults(s["items"], f"{path}.items", validate, inside_meta=inside_meta, root=False)
    embedded = root or bool(s.get("x-kubernetes-embedded-resource"))
    for key, prop in (s.get("properties") or {}).items():
        meta = inside_meta or (embedded and key in META_FIELDS)
        errs += _defaults(prop, f"{path}.properties[{key}]", validate, inside_meta=meta, root=False)
    return errs
