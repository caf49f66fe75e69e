"""Decoding a request body into a typed object: wrong types and unknown fields.

The real API server decodes JSON into Go structs: a value of the wrong type is a
``400 BadRequest`` (``json: cannot unmarshal ...``); a field the type does not have is
dropped, reported as a warning, or refused, as the request's ``fieldValidation``
(``Ignore`` | ``Warn``, the default | ``Strict``) asks. The field sets and types come from the
published OpenAPI schemas of Kubernetes 1.32 (the ``kubernetes-validate`` package's strict
JSON Schemas, generated from the Go types); ``required`` and enums are left to validation.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource

JSON = dict[str, Any]
SCHEMA_VERSION = "v1.32.0-local-strict"
_DIR = resources.files("kubernetes_validate") / "kubernetes-json-schema" / SCHEMA_VERSION


class DecodeError(Exception):
    """The body cannot be decoded into the kind (400); the message reads like the server's."""


@functools.cache
def _registry() -> Registry:
    defs = json.loads((_DIR / "_definitions.json").read_text(encoding="utf-8"))
    return Resource.from_contents(defs) @ Registry()


@functools.cache
def _validator(api_version: str, kind: str) -> jsonschema.protocols.Validator | None:
    group, _, version = api_version.rpartition("/")
    prefix = group.split(".")[0]
    name = f"{kind.lower()}-{prefix}-{version}.json" if group else f"{kind.lower()}-{version}.json"
    path = _DIR / name
    if not path.is_file():
        return None
    schema = json.loads(path.read_text(encoding="utf-8"))
    registry = Resource.from_contents(schema) @ _registry()
    return jsonschema.Draft202012Validator(schema, registry=registry)


def knows(api_version: str, kind: str) -> bool:
    """Whether the published schemas describe this built-in kind."""
    return _validator(api_version, kind) is not None


def _path(parts: Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _go_type(schema: JSON) -> str:
    types = schema.get("type")
    if isinstance(types, list):
        types = next((t for t in types if t != "null"), "object")
    return {"integer": "int64", "number": "float64", "boolean": "bool", "array": "[]", "object": "struct"}.get(
        str(types), str(types)
    )


def check(obj: JSON, *, field_validation: str) -> list[str]:
    """Raise ``DecodeError`` for wrong types; drop unknown fields (or refuse them under Strict).

    Returns the warnings to send (``unknown field "a.b"``), empty under Ignore and Strict.
    """
    validator = _validator(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if validator is None:
        return []
    kind, version = obj["kind"], str(obj["apiVersion"]).rpartition("/")[2]
    where = f'{kind} in version "{version}" cannot be handled as a {kind}'
    unknown: list[tuple[list[Any], str]] = []
    for err in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        if err.validator == "additionalProperties":
            allowed = set((err.schema.get("properties") or {}).keys())
            for key in sorted(set(err.instance) - allowed):
                unknown.append((list(err.absolute_path), key))
        elif err.validator in ("type", "oneOf") and not _inside_unknown(err.absolute_path, unknown):
            actual = "object" if isinstance(err.instance, dict) else type(err.instance).__name__
            actual = {"str": "string", "int": "number", "float": "number", "bool": "bool", "list": "array"}.get(
                actual, actual
            )
            raise DecodeError(
                f"{where}: json: cannot unmarshal {actual} into Go struct field "
                f"{_path(err.absolute_path)} of type {_go_type(err.schema)}"
            )
    if not unknown:
        return []
    paths = [_path([*parent, key]) for parent, key in unknown]
    if field_validation == "Strict":
        detail = ", ".join(f'unknown field "{p}"' for p in paths)
        raise DecodeError(f"{where}: strict decoding error: {detail}")
    for parent, key in unknown:
        node: Any = obj
        for part in parent:
            node = node[part]
        node.pop(key, None)
    return [] if field_validation == "Ignore" else [f'unknown field "{p}"' for p in paths]


def _inside_unknown(path: Any, unknown: list[tuple[list[Any], str]]) -> bool:
    parts = list(path)
    return any(parts[: len(parent) + 1] == [*parent, key] for parent, key in unknown)
