"""Parts of a resource that stand for an OpenClaw config object and keep OpenClaw's other keys.

A resource declares, under ``spec``, every key OpenClaw allows for the object it stands for
(an Agent is ``agents.entries.<id>``, a Channel ``channels.<type>``, …). clawplane types the
keys it acts on; the rest are kept as they are written ("OpenClaw keys") and are checked
against OpenClaw's own config schema by ``clawplane.validation.openclaw``, which knows where
each part sits in that schema. Any string there may be a ``valueFrom`` reference.

``OWN`` names (by their wire names) the fields of a part that are clawplane's and not OpenClaw
keys at that place: they are never checked against, nor rendered into, OpenClaw's object.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, WithJsonSchema
from typing_extensions import TypeAliasType

from clawplane.models.base import Model
from clawplane.models.values import ValueFrom


def _open_kind(value: object) -> str:
    if isinstance(value, ValueFrom):
        return "ref"
    if isinstance(value, dict):
        return "ref" if "valueFrom" in value else "map"
    if isinstance(value, list):
        return "list"
    return "scalar"


if TYPE_CHECKING:
    OpenValue = Any
else:
    OpenValue = TypeAliasType(
        "OpenValue",
        Annotated[
            Annotated[ValueFrom, Tag("ref")]
            | Annotated[dict[str, "OpenValue"], Tag("map")]
            | Annotated[list["OpenValue"], Tag("list")]
            | Annotated[Any, Tag("scalar")],
            Discriminator(_open_kind),
            # The schema generators put OpenClaw's own schema of each key here instead.
            WithJsonSchema({}),
        ],
    )
"""A JSON value written by OpenClaw's names, where a ``{valueFrom: …}`` mapping is a reference."""


class OpenPart(Model):
    """A part of a spec that also holds OpenClaw's keys for the object it stands for."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, OpenValue] = Field(init=False)

    @property
    def openclaw_keys(self) -> dict[str, Any]:
        """The OpenClaw keys written here beside the typed fields (values may hold ``ValueFrom``)."""
        return self.__pydantic_extra__ or {}


def openclaw_view(part: BaseModel) -> dict[str, Any]:
    """A typed part by OpenClaw's names: the fields the user set (not clawplane's own) and its OpenClaw
    keys, as plain data (enums as values; references kept as ``ValueFrom``)."""
    own: frozenset[str] = getattr(type(part), "OWN", frozenset())
    out: dict[str, Any] = {}
    for name, info in type(part).model_fields.items():
        key = info.alias or name
        if key in own or name not in part.model_fields_set:
            continue
        value = getattr(part, name)
        if value is not None:
            out[key] = _view(value)
    if isinstance(part, OpenPart):
        out.update({k: _view(v) for k, v in part.openclaw_keys.items()})
    return out


def _view(value: Any) -> Any:
    if isinstance(value, ValueFrom):
        return value
    if isinstance(value, BaseModel):
        return openclaw_view(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _view(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_view(v) for v in value]
    return value


def deep_merged(base: Any, overlay: Any) -> Any:
    """``overlay`` merged over a copy of ``base``, mapping by mapping (lists and scalars replace)."""
    if isinstance(base, dict) and isinstance(overlay, dict):
        out = dict(base)
        for key, value in overlay.items():
            out[key] = deep_merged(base[key], value) if key in base else value
        return out
    return overlay


def walk_references(value: Any, path: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], str, Any]]:
    """``(path, key, value)`` of every ``ValueFrom`` and every scalar under an OpenClaw value."""
    found: list[tuple[tuple[str | int, ...], str, Any]] = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [(path, value)]
    while stack:
        here, node = stack.pop()
        if isinstance(node, dict):
            stack.extend(((*here, k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(((*here, i), v) for i, v in reversed(list(enumerate(node))))
        else:
            key = next((str(p) for p in reversed(here) if isinstance(p, str)), "")
            found.append((here, key, node))
    return found


__all__ = ["OpenPart", "OpenValue", "deep_merged", "openclaw_view", "walk_references"]
