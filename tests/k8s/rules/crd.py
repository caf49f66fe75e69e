"""What the API server accepts as a CustomResourceDefinition.

Ported from k8s.io/apiextensions-apiserver ``pkg/apis/apiextensions/validation/validation.go``:
``ValidateCustomResourceDefinition`` (names, group, scope, versions, printer columns,
subresources, the root of a schema with a status subresource) and
``ValidateCustomResourceDefinitionOpenAPISchema`` (unsupported keywords, defaults where
they are forbidden, list and map types), combined with the structural rules of
tests/k8s/rules/structural.py. CEL rules (``x-kubernetes-validations``) cannot be compiled
here: a CRD that has them is stored with a Warning saying they are not evaluated (clawplane's
CRDs carry some; tests/compat/kubernetes checks them on a real API server).
"""

from __future__ import annotations

from typing import Any

from tests.k8s import tables
from tests.k8s.rules import fielderrors as fe
from tests.k8s.rules import names
from tests.k8s.rules.fielderrors import FieldError
from tests.k8s.rules.structural import (
    NotStructuralError,
    check_convertible,
    validate_defaults,
    validate_structural,
)
from tests.k8s.rules.values import validate_value

JSON = dict[str, Any]
OPENAPI_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
PRINTER_TYPES = ["boolean", "date", "integer", "number", "string"]
PRINTER_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "name", "password"]
_ROOT_ALLOWED = {
    "description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "required",
    "items", "properties", "externalDocs", "example", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
}  # fmt: skip
_META = ("metadata", "kind", "apiVersion")


class UnsupportedByEmulatorError(Exception):
    """A CRD feature the emulator cannot check faithfully; the caller answers 501."""


CEL_WARNING = (
    "the emulator stores x-kubernetes-validations (CEL) but does not evaluate them; "
    "tests/compat/kubernetes runs them on a real API server"
)


def validate_crd(crd: JSON) -> list[FieldError]:
    """Every reason ``crd`` would be refused on create."""
    spec = crd.get("spec") or {}
    names_ = spec.get("names") or {}
    errs: list[FieldError] = []
    name = (crd.get("metadata") or {}).get("name") or ""
    wanted = f"{names_.get('plural', '')}.{spec.get('group', '')}"
    for msg in names.is_dns1123_subdomain(name):
        errs.append(fe.invalid("metadata.name", name, msg))
    if name != wanted:
        errs.append(fe.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    errs += _spec(spec)
    errs += _names(crd.get("status", {}).get("acceptedNames") or {}, "status.acceptedNames")
    return errs


def validate_crd_update(new: JSON, old: JSON) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionUpdate``: the create rules plus what may not change."""
    errs = validate_crd(new)
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if _established(old) and new_spec.get("scope") != old_spec.get("scope"):
        errs.append(fe.immutable("spec.scope", new_spec.get("scope")))
    if new_spec.get("group") != old_spec.get("group"):
        errs.append(fe.immutable("spec.group", new_spec.get("group")))
    stored = (old.get("status") or {}).get("storedVersions") or []
    served = {v.get("name") for v in new_spec.get("versions") or []}
    for i, version in enumerate(stored):
        if version not in served:
            errs.append(fe.invalid(f"status.storedVersions[{i}]", version, "must appear in spec.versions"))
    return errs


def _established(crd: JSON) -> bool:
    return any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in (crd.get("status") or {}).get("conditions") or []
    )


def _spec(spec: JSON) -> list[FieldError]:
    errs: list[FieldError] = []
    group = spec.get("group") or ""
    if not group:
        errs.append(fe.required("spec.group"))
    elif msgs := names.is_dns1123_subdomain(group):
        errs.append(fe.invalid("spec.group", group, ",".join(msgs)))
    elif len(group.split(".")) < 2:
        errs.append(fe.invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = spec.get("scope") or ""
    if not scope:
        errs.append(fe.required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errs.append(fe.not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    versions = spec.get("versions") or []
    storage = sum(1 for v in versions if v.get("storage"))
    seen: set[str] = set()
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        vname = version.get("name") or ""
        if vname in seen:
            errs.append(fe.invalid("spec.versions", versions, "must contain unique version names"))
        seen.add(vname)
        if msgs := names.is_dns1035_label(vname):
            errs.append(fe.invalid(f"{path}.name", vname, ",".join(msgs)))
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if schema is None:
            errs.append(fe.required(f"{path}.schema.openAPIV3Schema"))
        else:
            status_enabled = "status" in (version.get("subresources") or {})
            errs += _schema(schema, f"{path}.schema.openAPIV3Schema", status_enabled)
        errs += _subresources(version.get("subresources") or {}, f"{path}.subresources")
        for j, col in enumerate(version.get("additionalPrinterColumns") or []):
            errs += _column(col, f"{path}.additionalPrinterColumns[{j}]")
    if storage != 1:
        errs.append(fe.invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
    for key in ("plural", "singular", "kind", "listKind"):
        if not (spec.get("names") or {}).get(key):
            errs.append(fe.required(f"spec.names.{key}"))
    errs += _names(spec.get("names") or {}, "spec.names")
    if spec.get("preserveUnknownFields"):
        errs.append(fe.invalid("spec.preserveUnknownFields", True, "must be false"))
    return errs


def _names(n: JSON, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("plural", "singular"):
        value = n.get(key) or ""
        if value and (msgs := names.is_dns1035_label(value)):
            errs.append(fe.invalid(f"{path}.{key}", value, ",".join(msgs)))
    for key in ("kind", "listKind"):
        value = n.get(key) or ""
        if value and (msgs := names.is_dns1035_label(value.lower())):
            errs.append(
                fe.invalid(f"{path}.{key}", value, "may have mixed case, but should otherwise match: " + ",".join(msgs))
            )
    for key in ("shortNames", "categories"):
        for i, value in enumerate(n.get(key) or []):
            if msgs := names.is_dns1035_label(value):
                errs.append(fe.invalid(f"{path}.{key}[{i}]", value, ",".join(msgs)))
    if n.get("kind") and n.get("kind") == n.get("listKind"):
        errs.append(fe.invalid(f"{path}.listKind", n["listKind"], "kind and listKind may not be the same"))
    return errs


def _column(col: JSON, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not col.get("name"):
        errs.append(fe.required(f"{path}.name"))
    ctype = col.get("type") or ""
    detail = "must be one of " + ",".join(PRINTER_TYPES)
    if not ctype:
        errs.append(fe.required(f"{path}.type", detail))
    elif ctype not in PRINTER_TYPES:
        errs.append(fe.invalid(f"{path}.type", ctype, detail))
    fmt = col.get("format") or ""
    if fmt and fmt not in PRINTER_FORMATS:
        errs.append(fe.invalid(f"{path}.format", fmt, "must be one of " + ",".join(PRINTER_FORMATS)))
    jsonpath = col.get("jsonPath") or ""
    if not jsonpath:
        errs.append(fe.required(f"{path}.JSONPath"))
    elif not jsonpath.startswith("."):
        errs.append(fe.invalid(f"{path}.JSONPath", jsonpath, "must be a simple json path starting with ."))
    else:
        try:
            tables.parse(jsonpath)
        except tables.JsonPathError as exc:
            raise UnsupportedByEmulatorError(f"printer column {jsonpath!r}: {exc}; the emulator cannot print it") from None
    return errs


def _subresources(subs: JSON, path: str) -> list[FieldError]:
    scale = subs.get("scale")
    if scale is None:
        return []
    errs: list[FieldError] = []
    for key, prefix in (("specReplicasPath", ".spec."), ("statusReplicasPath", ".status.")):
        value = scale.get(key) or ""
        if not value:
            errs.append(fe.required(f"{path}.scale.{key}"))
        elif not value.startswith(prefix):
            errs.append(fe.invalid(f"{path}.scale.{key}", value, f"should be a json path under {prefix[:-1]}"))
    return errs


def _schema(schema: JSON, path: str, status_enabled: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if status_enabled:
        if schema.get("type") not in (None, "", "object"):
            errs.append(
                fe.invalid(
                    f"{path}.type",
                    schema.get("type"),
                    'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
                )
            )
        elif any(k not in _ROOT_ALLOWED for k in schema if schema[k] not in (None, False, "", [], {})):
            allowed = "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]"
            errs.append(
                fe.invalid(
                    path, fe.OMIT, f"only {allowed} fields are allowed at the root of the schema if the status subresource is enabled"
                )
            )
    if schema.get("nullable"):
        errs.append(fe.forbidden(f"{path}.nullable", "nullable cannot be true at the root"))
    try:
        check_convertible(schema)
    except NotStructuralError as exc:
        structural_init = [fe.invalid(path, "", str(exc))]
    else:
        structural_init = []
        structural = validate_structural(schema, path)
        errs += structural
        if not structural:
            errs += validate_defaults(schema, path, validate_value)
    errs += _openapi(schema, path, root=True, embedded=False, defaults_forbidden="", inside_meta=False)
    if not errs:
        errs += structural_init
    return errs


def has_cel(node: Any) -> bool:
    """Whether a schema (or any node of it) carries CEL rules."""
    if isinstance(node, dict):
        return bool(node.get("x-kubernetes-validations")) or any(has_cel(v) for v in node.values())
    if isinstance(node, list):
        return any(has_cel(v) for v in node)
    return False


def _openapi(
    s: JSON, path: str, *, root: bool, embedded: bool, defaults_forbidden: str, inside_meta: bool
) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionOpenAPISchema`` with the V3 standard validator."""
    errs: list[FieldError] = []
    stype = s.get("type") or ""
    if stype and stype not in OPENAPI_TYPES:
        errs.append(fe.not_supported(f"{path}.type", stype, OPENAPI_TYPES))
    if "default" in s and defaults_forbidden:
        errs.append(fe.forbidden(f"{path}.default", f"must not be set {defaults_forbidden}"))
    for key, label in (
        ("id", "id"),
        ("additionalItems", "additionalItems"),
        ("patternProperties", "patternProperties"),
        ("definitions", "definitions"),
        ("dependencies", "dependencies"),
        ("$ref", "$ref"),
    ):
        if s.get(key):
            errs.append(fe.forbidden(f"{path}.{key}", f"{label} is not supported"))
    if stype == "null":
        errs.append(fe.forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(s.get("items"), list):
        errs.append(fe.forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if inside_meta and s.get("x-kubernetes-embedded-resource"):
        errs.append(fe.forbidden(f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"))
    if s.get("uniqueItems"):
        errs.append(
            fe.forbidden(f"{path}.uniqueItems", "uniqueItems cannot be set to true since the runtime complexity becomes quadratic")
        )
    addl = s.get("additionalProperties")
    props = s.get("properties") or {}
    if addl is not None:
        if props and addl is not True:
            errs.append(fe.forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"))
        if isinstance(addl, dict):
            forbid = "inside additionalProperties applying to object metadata" if inside_meta else defaults_forbidden
            errs += _openapi(addl, f"{path}.additionalProperties", root=False, embedded=False, defaults_forbidden=forbid, inside_meta=inside_meta)
    for key, prop in props.items():
        meta = (root or bool(s.get("x-kubernetes-embedded-resource"))) and key in _META
        forbid = f"in top-level {key}" if root and key in _META else defaults_forbidden
        errs += _openapi(
            prop, f"{path}.properties[{key}]", root=False, embedded=False, defaults_forbidden=forbid, inside_meta=inside_meta or meta
        )
    for junctor in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(s.get(junctor) or []):
            errs += _openapi(sub, f"{path}.{junctor}[{i}]", root=False, embedded=False, defaults_forbidden=defaults_forbidden, inside_meta=inside_meta)
    if isinstance(s.get("not"), dict):
        errs += _openapi(s["not"], f"{path}.not", root=False, embedded=False, defaults_forbidden=defaults_forbidden, inside_meta=inside_meta)
    if isinstance(s.get("items"), dict):
        errs += _openapi(s["items"], f"{path}.items", root=False, embedded=False, defaults_forbidden=defaults_forbidden, inside_meta=inside_meta)
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(fe.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))
    errs += _list_and_map_types(s, path)
    return errs


def _list_and_map_types(s: JSON, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    stype = s.get("type") or ""
    map_type = s.get("x-kubernetes-map-type")
    if map_type is not None:
        if stype != "object":
            detail = "must be object if x-kubernetes-map-type is specified"
            errs.append(fe.required(f"{path}.type", detail) if not stype else fe.invalid(f"{path}.type", stype, detail))
        if map_type not in ("atomic", "granular"):
            errs.append(fe.not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]))
    list_type = s.get("x-kubernetes-list-type")
    if list_type is not None:
        if stype != "array":
            detail = "must be array if x-kubernetes-list-type is specified"
            errs.append(fe.required(f"{path}.type", detail) if not stype else fe.invalid(f"{path}.type", stype, detail))
        if list_type not in ("atomic", "set", "map"):
            errs.append(fe.not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
    keys = s.get("x-kubernetes-list-map-keys") or []
    if keys and list_type != "map":
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        errs.append(
            fe.required(f"{path}.x-kubernetes-list-type", detail)
            if list_type is None
            else fe.invalid(f"{path}.x-kubernetes-list-type", list_type, detail)
        )
    if list_type == "map":
        items = s.get("items") if isinstance(s.get("items"), dict) else None
        if not keys:
            errs.append(fe.required(f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"))
        if items is None:
            errs.append(fe.required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
        elif items.get("type") != "object":
            errs.append(
                fe.invalid(f"{path}.items.type", items.get("type") or "", "must be object if parent array's x-kubernetes-list-type is map")
            )
        else:
            required = set(items.get("required") or [])
            for key in keys:
                prop = (items.get("properties") or {}).get(key)
                if prop is None:
                    errs.append(fe.invalid(f"{path}.x-kubernetes-list-map-keys", keys, "entries must all be names of item properties"))
                    continue
                if prop.get("type") in ("array", "object"):
                    errs.append(
                        fe.invalid(f"{path}.items.properties[{key}].type", items.get("type"), "must be a scalar type if parent array's x-kubernetes-list-type is map")
                    )
                if key not in required and "default" not in prop:
                    errs.append(
                        fe.required(
                            f"{path}.items.properties[{key}].default",
                            "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                        )
                    )
                if prop.get("nullable"):
                    errs.append(
                        fe.forbidden(f"{path}.items.properties[{key}].nullable", "this property is in x-kubernetes-list-map-keys, so it cannot be nullable")
                    )
    if list_type in ("set", "map") and isinstance(s.get("items"), dict) and s["items"].get("nullable"):
        errs.append(fe.forbidden(f"{path}.items.nullable", f"cannot be nullable when x-kubernetes-list-type is {list_type}"))
    return errs
