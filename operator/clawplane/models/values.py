"""Secret-capable values: a literal, or a reference resolved only at run time.

A value such as an ``env`` entry or an HTTP header is either written inline
(string, number or boolean, as OpenClaw accepts) or taken from somewhere else with
``valueFrom``: an environment variable of the clawplane process, a file, or (in
Kubernetes) a key of a Secret. References are never resolved while loading.
"""

from __future__ import annotations

from typing import Annotated, Any, get_args

from pydantic import (
    BaseModel,
    Discriminator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    Tag,
    model_validator,
)

from clawplane.models.base import Model, NonEmptyStr


class SecretKeyRef(Model):
    """A key of a Kubernetes Secret in the resource's namespace."""

    name: NonEmptyStr
    """The Secret's name."""
    key: NonEmptyStr
    """The key inside the Secret's data."""


class ValueSource(Model):
    """Exactly one place to read a value from."""

    env: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] | None = None
    """Name of an environment variable of the clawplane process."""
    file: NonEmptyStr | None = None
    """Path of a file whose content (trailing newline stripped) is the value; relative to the resource file."""
    secret_key_ref: SecretKeyRef | None = None
    """A Kubernetes Secret key (kubernetes driver only)."""

    @model_validator(mode="after")
    def _exactly_one(self) -> ValueSource:
        count = sum(v is not None for v in (self.env, self.file, self.secret_key_ref))
        if count != 1:
            raise ValueError("valueFrom needs exactly one of env, file, secretKeyRef")
        return self


class ValueFrom(Model):
    """A value taken from an environment variable, a file or a Secret."""

    value_from: ValueSource
    """Where the value comes from."""


Literal_ = StrictStr | StrictInt | StrictFloat | StrictBool


def _value_kind(value: object) -> str:
    # Dicts can only be references; picking the branch up front keeps errors to the point.
    if isinstance(value, dict | ValueFrom):
        return "valueFrom"
    return "literal"


SecretValue = Annotated[
    Annotated[Literal_, Tag("literal")] | Annotated[ValueFrom, Tag("valueFrom")],
    Discriminator(_value_kind),
]
"""A literal value, or ``{valueFrom: {env|file|secretKeyRef: …}}``."""


def is_reference(value: object) -> bool:
    """True when ``value`` is a ``valueFrom`` reference rather than a literal."""
    return isinstance(value, ValueFrom)


def literal_text(value: Literal_) -> str:
    """A literal as the string OpenClaw would pass on (booleans as ``true``/``false``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def admits_reference(annotation: Any) -> bool:
    """Whether a field's type admits a ``valueFrom`` reference (alone, or as mapping values)."""
    if annotation is ValueFrom:
        return True
    return any(admits_reference(arg) for arg in get_args(annotation))


def secret_fields(
    model: BaseModel, path: tuple[str | int, ...] = ()
) -> list[tuple[tuple[str | int, ...], str, Any]]:
    """``(path, key, value)`` of every secret-capable value under ``model``; paths use wire names."""
    found: list[tuple[tuple[str | int, ...], str, Any]] = []
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        key = info.alias or name
        if value is None:
            continue
        if admits_reference(info.annotation):
            if isinstance(value, dict):
                found.extend(((*path, key, k), k, v) for k, v in value.items())
            else:
                found.append(((*path, key), key, value))
        elif isinstance(value, BaseModel):
            found.extend(secret_fields(value, (*path, key)))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    found.extend(secret_fields(item, (*path, key, i)))
    return found
