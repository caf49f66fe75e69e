"""Validating a value against a structural schema, as kube-openapi does for custom resources.

Follows k8s.io/kube-openapi ``pkg/validation/validate`` (types, nullable, enum, bounds,
lengths, pattern, items, required, junctors) and the conversion to field errors in
apiextensions-apiserver ``pkg/apiserver/validation/validation.go``
(``kubeOpenAPIResultToFieldErrors``): required → ``Required``, enum → ``Unsupported value``,
maxLength → ``Too long``, maxItems → ``Too many``, type → ``Invalid value`` with
``<path> in body must be of type <t>: "<actual>"``, anything else → ``Invalid value``.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
import math
import re
import uuid
from typing import Any

from tests.k8s.rules import fielderrors as fe
from tests.k8s.rules.fielderrors import FieldError

JSON = dict[str, Any]


def json_type(value: Any) -> str:
    """The JSON type name kube-openapi reports for a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _is_type(value: Any, wanted: str) -> bool:
    actual = json_type(value)
    if wanted == "number":
        return actual in ("integer", "number")
    if wanted == "integer" and actual == "number":
        return float(value).is_integer()
    return actual == wanted


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _shown(value: Any) -> Any:
    """The bad value as the Status shows it (objects and lists as JSON)."""
    return value


class Validator:
    """Validates one value tree; collects field errors (never stops at the first)."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def validate(self, value: Any, s: JSON, path: str) -> None:
        """Check ``value`` at ``path`` against schema node ``s`` and everything below it."""
        name = path or "."
        if value is None:
            if s.get("nullable") or not s.get("type"):
                return
            self._type_error(path, s["type"], value)
            return
        if s.get("x-kubernetes-int-or-string") and json_type(value) not in ("integer", "string"):
            for t in ("integer", "string"):
                self._type_error(path, t, value)
            self.errors.append(fe.invalid(name, _shown(value), f"{name} in body must validate at least one schema (anyOf)"))
            return
        stype = s.get("type")
        if stype and not _is_type(value, stype):
            self._type_error(path, stype, value)
            return
        self._enum(value, s, path)
        if isinstance(value, str):
            self._string(value, s, path)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self._number(value, s, path)
        elif isinstance(value, list):
            self._array(value, s, path)
        elif isinstance(value, dict):
            self._object(value, s, path)
        self._junctors(value, s, path)

    def _type_error(self, path: str, wanted: str, value: Any) -> None:
        name = path or "."
        detail = f'{name} in body must be of type {wanted}: "{json_type(value)}"'
        self.errors.append(fe.FieldError("FieldValueTypeInvalid", name, _shown(value) if value is not None else "null", detail))

    def _enum(self, value: Any, s: JSON, path: str) -> None:
        enum = s.get("enum")
        if enum is None or (value in enum and all(json_type(value) == json_type(e) for e in enum if e == value)):
            return
        shown = [e if isinstance(e, str) else json.dumps(e) for e in enum]
        self.errors.append(fe.not_supported(path or ".", value, shown))

    def _string(self, value: str, s: JSON, path: str) -> None:
        name = path or "."
        length = len(value)  # runes: kube-openapi counts characters, not bytes
        if "maxLength" in s and length > s["maxLength"]:
            self.errors.append(fe.FieldError("FieldValueTooLong", name, fe.OMIT, f"may not be more than {s['maxLength']} bytes"))
        if "minLength" in s and length < s["minLength"]:
            self.errors.append(fe.invalid(name, value, f"{name} in body should be at least {s['minLength']} chars long"))
        if s.get("pattern") and re.search(s["pattern"], value) is None:
            self.errors.append(fe.invalid(name, value, f"{name} in body should match '{s['pattern']}'"))
        fmt = s.get("format")
        if fmt and not _format_ok(fmt, value):
            self.errors.append(fe.invalid(name, value, f'{name} in body must be of type {fmt}: "{value}"'))

    def _number(self, value: float, s: JSON, path: str) -> None:
        name = path or "."
        if "maximum" in s:
            limit = s["maximum"]
            if value > limit or (s.get("exclusiveMaximum") and value >= limit):
                op = "less than" if s.get("exclusiveMaximum") else "less than or equal to"
                self.errors.append(fe.invalid(name, value, f"{name} in body should be {op} {_num(limit)}"))
        if "minimum" in s:
            limit = s["minimum"]
            if value < limit or (s.get("exclusiveMinimum") and value <= limit):
                op = "greater than" if s.get("exclusiveMinimum") else "greater than or equal to"
                self.errors.append(fe.invalid(name, value, f"{name} in body should be {op} {_num(limit)}"))
        if s.get("multipleOf") and not math.isclose(value / s["multipleOf"], round(value / s["multipleOf"])):
            self.errors.append(fe.invalid(name, value, f"{name} in body should be a multiple of {_num(s['multipleOf'])}"))
        fmt = s.get("format")
        if (fmt == "int32" and not -(2**31) <= value < 2**31) or (fmt == "int64" and not -(2**63) <= value < 2**63):
            self.errors.append(fe.invalid(name, value, f"{name} in body must be of type {fmt}: \"{_num(value)}\""))

    def _array(self, value: list[Any], s: JSON, path: str) -> None:
        name = path or "."
        if "maxItems" in s and len(value) > s["maxItems"]:
            self.errors.append(fe.too_many(name, len(value), s["maxItems"]))
        if "minItems" in s and len(value) < s["minItems"]:
            self.errors.append(fe.invalid(name, value, f"{name} in body should have at least {s['minItems']} items"))
        items = s.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                self.validate(item, items, f"{path}[{i}]")
        if s.get("x-kubernetes-list-type") == "set":
            seen: list[str] = []
            for i, item in enumerate(value):
                key = json.dumps(item, sort_keys=True)
                if key in seen:
                    self.errors.append(fe.duplicate(f"{path}[{i}]", item))
                seen.append(key)

    def _object(self, value: JSON, s: JSON, path: str) -> None:
        name = path or "."
        prefix = f"{path}." if path else ""
        for key in s.get("required") or []:
            if key not in value:
                self.errors.append(fe.required(f"{prefix}{key}", ""))
        if "maxProperties" in s and len(value) > s["maxProperties"]:
            self.errors.append(fe.too_many(name, len(value), s["maxProperties"]))
        if "minProperties" in s and len(value) < s["minProperties"]:
            self.errors.append(fe.invalid(name, value, f"{name} in body should have at least {s['minProperties']} properties"))
        props = s.get("properties") or {}
        addl = s.get("additionalProperties")
        for key, item in value.items():
            if key in props:
                self.validate(item, props[key], f"{prefix}{key}")
            elif isinstance(addl, dict):
                self.validate(item, addl, f"{prefix}{key}")

    def _junctors(self, value: Any, s: JSON, path: str) -> None:
        name = path or "."

        def passes(sub: JSON) -> bool:
            inner = Validator()
            inner.validate(value, sub, path)
            return not inner.errors

        if s.get("x-kubernetes-int-or-string") and (s.get("anyOf") or []) == [{"type": "integer"}, {"type": "string"}]:
            return
        any_of = s.get("anyOf") or []
        if any_of and not any(passes(sub) for sub in any_of):
            self.errors.append(fe.invalid(name, value, f"{name} in body must validate at least one schema (anyOf)"))
        one_of = s.get("oneOf") or []
        if one_of and sum(passes(sub) for sub in one_of) != 1:
            self.errors.append(fe.invalid(name, value, f"{name} in body must validate one and only one schema (oneOf)"))
        for sub in s.get("allOf") or []:
            self.validate(value, sub, path)
        if isinstance(s.get("not"), dict) and passes(s["not"]):
            self.errors.append(fe.invalid(name, value, f"{name} in body must not validate the schema (not)"))


def _format_ok(fmt: str, value: str) -> bool:
    """The string formats apiextensions keeps (others are stripped and never checked)."""
    try:
        if fmt == "byte":
            base64.b64decode(value, validate=True)
        elif fmt == "date-time" or fmt == "datetime":
            datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        elif fmt == "date":
            datetime.date.fromisoformat(value)
        elif fmt == "uuid":
            uuid.UUID(value)
        elif fmt == "ipv4":
            return bool(re.fullmatch(r"(\d{1,3}\.){3}\d{1,3}", value))
        elif fmt == "hostname":
            return bool(re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*", value))
    except (ValueError, binascii.Error):
        return False
    return True


def validate_value(value: Any, schema: JSON, path: str = "") -> list[FieldError]:
    """Every field error of ``value`` against ``schema`` (``path`` prefixes every field)."""
    v = Validator()
    v.validate(value, schema, path)
    return v.errors
