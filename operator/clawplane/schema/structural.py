"""JSON Schema (as ``clawplane.schema.jsonschema`` writes it) → Kubernetes' structural schema dialect.

Kubernetes requires *structural* schemas: a ``type`` on every node, no ``$ref``, no ``const``,
OpenAPI 3.0 ``nullable`` instead of "X or null", boolean ``exclusiveMinimum``, no unions of
differently-typed values (except ``x-kubernetes-int-or-string``), a regular expression Go's
RE2 compiles, and none of JSON Schema's other keywords (``propertyNames``, ``uniqueItems``,
``if``/``then``, …). What cannot be said that way is said more loosely, never more strictly:

- unions of constants become an ``enum``; unions of one type keep the type; other unions (a
  literal or a ``valueFrom`` reference, a string or a SecretRef object, discriminated object
  variants) keep their values with ``x-kubernetes-preserve-unknown-fields`` and their description;
- an object that takes keys beyond its ``properties`` keeps them the same way;
- a Channel's per-type ``if``/``then`` branches are merged (``merge``): the union of the keys, a
  key the types define differently said as loosely as all of them need;
- the free ``config`` of a plugin entry is kept as written.

The operator validates every value with the same code as the CLI, so nothing is lost. Defaults
are not carried (the API server would write them into every stored object; an absent field must
stay absent): the description says what they are. A title stands in for a missing description.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from clawplane.jscompat import json_type
from clawplane.schema.openclawjson import VALUE_FROM_REF
from clawplane.schema.openclawparts import UNDESCRIBED

Schema = dict[str, Any]
Path = tuple[str, ...]
PRESERVE = "x-kubernetes-preserve-unknown-fields"
INT_OR_STRING = "x-kubernetes-int-or-string"
_SCALAR_KEYS = (
    "format", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength",
    "pattern", "multipleOf", "enum",
)  # fmt: skip
_KUBE_FORMATS = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4",
    "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
    "date", "duration", "datetime", "date-time",
})  # fmt: skip
"""The string formats the API server knows; others are left out (it would refuse or ignore them)."""
_NOT_RE2 = re.compile(r"\(\?<?[=!]|\\[1-9]")
"""Lookarounds and backreferences: ECMAScript has them, Go's RE2 (the API server's) has not."""
PLUGIN_CONFIG = ("spec", "plugins", "entries", "*", "config")
"""A plugin entry's free ``config``: each plugin's own schema, unbounded; kept as written."""


class Structural:
    """Converts the nodes of one JSON Schema document, resolving its ``$defs`` references."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs

    def resolve(self, node: Any) -> Any:
        """``node`` with its ``$ref`` replaced by the definition (the node's own keys win)."""
        for _ in range(64):
            if not isinstance(node, dict) or "$ref" not in node:
                return node
            target = self.defs[str(node["$ref"]).rsplit("/", 1)[-1]]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        raise ValueError("a $ref chain too long to inline")

    def node(self, schema: Any, path: Path = ()) -> Schema:
        """The structural form of ``schema`` at property ``path`` (``*``: a map's values, ``[]``: items)."""
        schema = self.resolve(schema)
        if not isinstance(schema, dict):
            return {PRESERVE: True}
        if _is_plugin_config(path):
            return _preserved(schema, _description(schema))
        if _variants(schema):
            return self._variants(schema, path)
        kind = schema.get("type")
        if isinstance(kind, list):
            return self._typelist(schema, kind, path)
        union = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(union, list):
            return self._union(schema, union, path)
        return self._plain(schema, path)

    def _plain(self, schema: Schema, path: Path) -> Schema:
        out: Schema = {}
        text = _description(schema)
        if text:
            out["description"] = text
        kind = schema.get("type") or _implied_type(schema)
        if kind is None:
            return {**out, PRESERVE: True}
        out["type"] = kind
        if kind == "object":
            out.update(self._object(schema, path))
        elif kind == "array":
            out.update(self._array(schema, path))
        else:
            out.update(_scalar(schema, kind))
        if schema.get("nullable") is True:
            out["nullable"] = True
        return out

    def _object(self, schema: Schema, path: Path) -> Schema:
        out: Schema = {}
        props = schema.get("properties")
        extra = schema.get("additionalProperties", True)
        values = (
            self.node(extra, (*path, "*")) if isinstance(extra, dict) and self.resolve(extra) != {} else None
        )
        named = {k: self.node(v, (*path, k)) for k, v in (props or {}).items() if v is not False}
        if named and values is not None and all(n == values for n in named.values()):
            # Named entries said exactly like any other (plugin entries, their configs kept as
            # written): a map says it once instead of once per name.
            named = {}
        if named:
            out["properties"] = named
            required = [r for r in schema.get("required", []) if r in named]
            if required:
                out["required"] = required
            if extra is not False:
                out[PRESERVE] = True  # keys beyond the named ones: a map cannot be said beside them
        elif values is not None:
            out["additionalProperties"] = values
        else:
            out[PRESERVE] = True
        for key in ("minProperties", "maxProperties"):
            if key in schema:
                out[key] = schema[key]
        return out

    def _array(self, schema: Schema, path: Path) -> Schema:
        out: Schema = {}
        inner = schema.get("items")
        if isinstance(inner, dict) and "prefixItems" not in schema:
            out["items"] = self.node(inner, (*path, "[]"))
        else:
            out["items"] = {PRESERVE: True}
        for key in ("minItems", "maxItems"):
            if key in schema:
                out[key] = schema[key]
        return out

    def _typelist(self, schema: Schema, kinds: list[Any], path: Path) -> Schema:
        rest = {k: v for k, v in schema.items() if k != "type"}
        return self._union(rest, [{**rest, "type": t} for t in kinds], path)

    def _union(self, schema: Schema, branches: list[Any], path: Path) -> Schema:
        flat = self._flatten(branches)
        values = [b for b in flat if not _is_null(b)]
        nullable = len(values) < len(flat)
        # A reference's own description ("a value taken from …") says nothing about this value.
        named = [self.resolve(b) for b in branches if b != {"$ref": VALUE_FROM_REF}]
        text = _description(schema) or _shared_description([b for b in named if isinstance(b, dict)])
        outer = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf", "type", "default")}
        if len(values) == 1:
            inner = self.node({**values[0], **outer}, path)
        else:
            inner = merge([self.node({**b, "description": ""}, path) for b in values], text)
        constants = _constants(named, self.resolve) if PRESERVE in inner and "type" not in inner else []
        if constants:
            # The enum is gone with the type (a reference may stand here too); the description keeps it.
            text = f"{text} One of: {', '.join(map(_word, constants))}.".strip()
        if text:
            inner = {"description": text, **{k: v for k, v in inner.items() if k != "description"}}
        if nullable:
            inner["nullable"] = True
        return _tidy(inner)

    def _flatten(self, branches: list[Any]) -> list[Schema]:
        out: list[Schema] = []
        for branch in branches:
            branch = self.resolve(branch)
            if not isinstance(branch, dict):
                out.append({})
                continue
            nested = branch.get("anyOf") or branch.get("oneOf")
            if isinstance(nested, list) and not isinstance(branch.get("type"), str):
                out.extend(self._flatten(nested))
            elif isinstance(branch.get("type"), list):
                rest = {k: v for k, v in branch.items() if k != "type"}
                out.extend({**rest, "type": t} for t in branch["type"])
            else:
                out.append(branch)
        return out

    def _variants(self, schema: Schema, path: Path) -> Schema:
        """A Channel spec: common typed fields, and per type (``if``/``then``) the keys of that type."""
        common = {k: v for k, v in schema.items() if k != "allOf"}
        base = self._plain(common, path)
        base_props: dict[str, Schema] = base.get("properties", {})
        per_key: dict[str, list[Schema]] = {}
        owners: dict[str, list[str]] = {}
        open_variant = False
        for branch in schema["allOf"]:
            then = self.resolve(branch["then"])
            name = str(branch["if"].get("properties", {}).get("type", {}).get("const", ""))
            for key, sub in then.get("properties", {}).items():
                one = base_props.get(key) if sub is True else self.node(sub, (*path, key))
                if one is not None:
                    per_key.setdefault(key, []).append(one)
                    owners.setdefault(key, []).append(name)
            open_variant |= then.get("additionalProperties", True) is not False
        props = dict(base_props)
        for key, variants in per_key.items():
            merged = merge(variants, _common_text(variants))
            if key not in base_props and len(variants) < len(schema["allOf"]):
                note = f"Only for type{'s' if len(owners[key]) > 1 else ''}: {', '.join(owners[key])}."
                text = f"{merged.pop('description', '')} {note}".strip()
                merged = {"description": text, **merged}
            props[key] = merged
        out = {**base, "properties": props}
        out.pop(PRESERVE, None)
        if open_variant:
            out[PRESERVE] = True
        return out


def merge(variants: list[Schema], text: str = "") -> Schema:
    """One structural node that admits every value any of ``variants`` admits."""
    out: Schema
    bare = [{k: v for k, v in variant.items() if k != "description"} for variant in variants]
    if all(b == bare[0] for b in bare):
        out = dict(bare[0])
    else:
        kinds = {v.get("type") for v in variants}
        if None in kinds or any(v.get(INT_OR_STRING) for v in variants):
            strings = kinds <= {"string", "integer", None} and all(
                v.get("type") or v.get(INT_OR_STRING) for v in variants
            )
            out = {INT_OR_STRING: True} if strings else {PRESERVE: True}
        elif len(kinds) > 1:
            out = {INT_OR_STRING: True} if kinds == {"string", "integer"} else {PRESERVE: True}
        else:
            out = _merge_one_type(variants, str(kinds.pop()))
    out.pop("description", None)
    if text:
        out = {"description": text, **out}
    if any(v.get("nullable") for v in variants):
        out["nullable"] = True
    return _tidy(out)


def _merge_one_type(variants: list[Schema], kind: str) -> Schema:
    if kind == "object":
        if all("properties" in v for v in variants):
            keys: dict[str, list[Schema]] = {}
            for v in variants:
                for key, sub in v["properties"].items():
                    keys.setdefault(key, []).append(sub)
            props = {k: merge(subs, _common_text(subs)) for k, subs in keys.items()}
            out: Schema = {"type": "object", "properties": props}
            required = set.intersection(*(set(v.get("required", [])) for v in variants))
            if required:
                out["required"] = [r for r in props if r in required]
            if any(v.get(PRESERVE) for v in variants):
                out[PRESERVE] = True
            return out
        if all("additionalProperties" in v for v in variants):
            values = [v["additionalProperties"] for v in variants]
            return {"type": "object", "additionalProperties": merge(values, _common_text(values))}
        return {"type": "object", PRESERVE: True}
    if kind == "array":
        inner = [v.get("items", {PRESERVE: True}) for v in variants]
        return {"type": "array", "items": merge(inner, _common_text(inner))}
    out = {"type": kind}
    enums = [v.get("enum") for v in variants]
    if all(isinstance(e, list) for e in enums):
        out["enum"] = list(dict.fromkeys(x for e in enums if isinstance(e, list) for x in e))
    return out


def _common_text(variants: list[Schema]) -> str:
    """The description most variants give (the first of the most common ones), OpenClaw's own first."""
    texts = Counter(v["description"] for v in variants if v.get("description"))
    ranked = sorted(texts.items(), key=lambda item: (item[0].startswith(UNDESCRIBED), -item[1]))
    return ranked[0][0] if ranked else ""


def _constants(branches: list[Any], resolve: Callable[[Any], Any]) -> list[Any]:
    """The values of a union of constants (its ``valueFrom`` reference left out), or nothing."""
    found: list[Any] = []
    for branch in map(resolve, branches):
        nested = branch.get("anyOf") or branch.get("oneOf") if isinstance(branch, dict) else None
        for item in map(resolve, nested) if isinstance(nested, list) else [branch]:
            if not isinstance(item, dict):
                return []
            if "const" in item:
                found.append(item["const"])
            elif isinstance(item.get("enum"), list):
                found.extend(item["enum"])
            elif item.get("type") != "null":
                return []
    return list(dict.fromkeys(v for v in found if v is not None))


def _word(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _shared_description(branches: list[Schema]) -> str:
    for branch in branches:
        text = _description(branch)
        if text:
            return text
    return ""


def _description(schema: Schema) -> str:
    text = schema.get("description") or schema.get("title") or ""
    shown = str(text).strip()
    if "default" in schema and schema["default"] is not None:
        return _with_default(shown, schema["default"])
    return shown


def _with_default(description: str | None, default: Any) -> str:
    """The description with the default appended (the schema itself carries none)."""
    text = (description or "").rstrip()
    shown = json.dumps(default, ensure_ascii=False)
    if shown in ("[]", "{}") or "default" in text.lower():
        return text
    return f"{text} Default: {shown}.".strip()


def _preserved(schema: Schema, text: str) -> Schema:
    out: Schema = {"description": text} if text else {}
    if schema.get("type") == "object":
        out["type"] = "object"
    out[PRESERVE] = True
    return out


def _tidy(node: Schema) -> Schema:
    """Drop what a loosened node can no longer say (a preserved node has no type-bound constraints)."""
    if node.get(INT_OR_STRING):
        return {k: v for k, v in node.items() if k in ("description", INT_OR_STRING, "nullable")}
    if node.get(PRESERVE) and "type" not in node:
        return {k: v for k, v in node.items() if k in ("description", PRESERVE, "nullable")}
    return node


def _is_null(branch: Schema) -> bool:
    return branch.get("type") == "null" or branch.get("const", 0) is None or branch.get("enum") == [None]


def _is_plugin_config(path: Path) -> bool:
    return len(path) == len(PLUGIN_CONFIG) and all(
        p == q or q == "*" for p, q in zip(path, PLUGIN_CONFIG, strict=True)
    )


def _variants(schema: Schema) -> bool:
    branches = schema.get("allOf")
    return (
        isinstance(branches, list)
        and bool(branches)
        and all(isinstance(b, dict) and "if" in b and "then" in b for b in branches)
    )


def _implied_type(schema: Schema) -> str | None:
    values = schema["enum"] if isinstance(schema.get("enum"), list) else None
    if "const" in schema:
        values = [schema["const"]]
    if values:
        kinds = {json_type(v) for v in values if v is not None}
        return kinds.pop() if len(kinds) == 1 else None
    if "properties" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return None


def _scalar(schema: Schema, kind: str) -> Schema:
    out: Schema = {}
    for key in _SCALAR_KEYS:
        if key not in schema:
            continue
        value = schema[key]
        if key in ("exclusiveMinimum", "exclusiveMaximum") and not isinstance(value, bool):
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            out[bound], out[key] = value, True
        elif _kube_accepts(key, value):
            out[key] = value
    values = out.get("enum")
    if "const" in schema:
        values = [schema["const"]]
    if isinstance(values, list):
        kept = [v for v in values if v is not None and _fits(v, kind)]
        if kept:
            out["enum"] = kept
        else:
            out.pop("enum", None)
    return out


def _kube_accepts(key: str, value: Any) -> bool:
    """Whether the API server takes this pattern or format as it is."""
    if key == "pattern":
        return isinstance(value, str) and not _NOT_RE2.search(value)
    if key == "format":
        return value in _KUBE_FORMATS
    return True


def _fits(value: Any, kind: str) -> bool:
    found = json_type(value)
    return found == kind or (kind == "number" and found == "integer")


__all__ = ["INT_OR_STRING", "PLUGIN_CONFIG", "PRESERVE", "Structural", "merge"]
