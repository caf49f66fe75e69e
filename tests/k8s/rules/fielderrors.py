"""Field errors and the ``422 Invalid`` Status they become (k8s.io/apimachinery util/validation/field).

``FieldError.text()`` renders exactly like ``field.Error.Error()``: ``path: Type: value: detail``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]
OMIT = object()
"""A bad value that is not shown (``field.OmitValueType``)."""

_WITH_VALUE = {
    "FieldValueInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueNotFound": "Not found",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueTooMany": "Too many",
    "FieldValueTypeInvalid": "Invalid value",
}
_WITHOUT_VALUE = {
    "FieldValueRequired": "Required value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "InternalError": "Internal error",
}


class Raw(str):
    """A bad value shown as is (Go's ``%v`` of a non-string, e.g. ``0x0``)."""


def _value(value: Any) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class FieldError:
    """One problem at one field path."""

    type: str
    field: str
    value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        """``field.Error.ErrorBody()``: the message without the field path."""
        if self.type in _WITH_VALUE and self.value is not OMIT:
            text = f"{_WITH_VALUE[self.type]}: {_value(self.value)}"
        else:
            text = _WITH_VALUE.get(self.type) or _WITHOUT_VALUE[self.type]
        return f"{text}: {self.detail}" if self.detail else text

    def text(self) -> str:
        """``field.Error.Error()``."""
        return f"{self.field}: {self.body()}"


def required(path: str, detail: str = "") -> FieldError:
    """``field.Required``."""
    return FieldError("FieldValueRequired", path, OMIT, detail)


def forbidden(path: str, detail: str) -> FieldError:
    """``field.Forbidden``."""
    return FieldError("FieldValueForbidden", path, OMIT, detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    """``field.Invalid``."""
    return FieldError("FieldValueInvalid", path, value, detail)


def not_supported(path: str, value: Any, supported: list[str]) -> FieldError:
    """``field.NotSupported``: lists the quoted supported values."""
    detail = "supported values: " + ", ".join(json.dumps(s) for s in supported) if supported else ""
    return FieldError("FieldValueNotSupported", path, value, detail)


def not_found(path: str, value: Any) -> FieldError:
    """``field.NotFound``."""
    return FieldError("FieldValueNotFound", path, value)


def duplicate(path: str, value: Any) -> FieldError:
    """``field.Duplicate``."""
    return FieldError("FieldValueDuplicate", path, value)


def too_long(path: str, limit: int) -> FieldError:
    """``field.TooLong`` with an unknown value."""
    return FieldError("FieldValueTooLong", path, OMIT, f"may not be more than {limit} bytes")


def too_many(path: str, count: int, limit: int) -> FieldError:
    """``field.TooMany``."""
    return FieldError("FieldValueTooMany", path, count, f"must have at most {limit} items")


def immutable(path: str, value: Any) -> FieldError:
    """``ValidateImmutableField``'s error."""
    return invalid(path, value, "field is immutable")


def each(path: str, value: Any, messages: list[str]) -> list[FieldError]:
    """One ``field.Invalid`` per message (how upstream turns ``Is...`` results into errors)."""
    return [invalid(path, value, m) for m in messages]


def aggregate(errors: list[FieldError]) -> str:
    """``ErrorList.ToAggregate().Error()``: one message, or ``[a, b]`` for several (duplicates dropped)."""
    texts: list[str] = []
    for err in errors:
        if err.text() not in texts:
            texts.append(err.text())
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def invalid_status(qualified_kind: str, kind: str, name: str, errors: list[FieldError]) -> JSON:
    """``apierrors.NewInvalid``: the 422 Status body, with one cause per error."""
    causes = [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{qualified_kind} "{name}" is invalid: {aggregate(errors)}',
        "reason": "Invalid",
        "details": {"name": name, "group": qualified_kind.partition(".")[2], "kind": kind, "causes": causes},
        "code": 422,
    }
