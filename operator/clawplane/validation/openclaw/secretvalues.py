"""The secret-capable values among a resource's OpenClaw keys: references, and literals OpenClaw keeps secret.

OpenClaw marks its secret fields in its schema: a SecretInput takes a string or a SecretRef
(``{source, provider, id}``). A literal there (a channel's ``botToken``, ``gateway.auth.token``)
is a secret whatever its name, so plans, status and logs redact it; a literal under a
sensitive-looking name elsewhere is one too. Every ``valueFrom`` is listed, so that its
value is resolved once, hashed into the resource (a rotated secret restarts what uses it)
and never shown.
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple, get_args, get_origin

from pydantic import BaseModel

from clawplane.models import Channel, OpenPart, Resource, ValueFrom
from clawplane.naming import is_sensitive_key
from clawplane.schema.openclaw import ANY, Node, admits_secret_ref, child, items, node_at
from clawplane.schema.openclaw.homes import home_path

PathT = tuple[str | int, ...]


class SecretValue(NamedTuple):
    """One secret-capable value among a resource's OpenClaw keys."""

    path: PathT
    """Where in the spec (wire names)."""
    key: str
    """The nearest key name (for name-based rules)."""
    value: Any
    """A ``ValueFrom`` or a literal."""
    secret_input: bool
    """OpenClaw's schema makes this a SecretInput field."""


def openclaw_secret_values(resource: Resource) -> list[SecretValue]:
    """The references and secret literals among the OpenClaw keys of ``resource`` (not its typed maps)."""
    home = home_path(resource)
    spec = getattr(resource, "spec", None)
    if home is None or not isinstance(spec, OpenPart):
        return []
    node = node_at(home) or ANY
    found: list[SecretValue] = []
    _part(spec, node, (), found)
    if isinstance(resource, Channel):
        for key, value in resource.spec.credentials.items():
            sub = child(node, key) or ANY
            _leaf(("credentials", key), key, value, sub, found)
    return found


def _part(part: BaseModel, node: Node, path: PathT, found: list[SecretValue]) -> None:
    if isinstance(part, OpenPart):
        for key, value in part.openclaw_keys.items():
            _value((*path, key), key, value, child(node, key) or ANY, found)
    for name, key in _walkable(type(part)):
        value = getattr(part, name)
        if isinstance(value, OpenPart):
            _part(value, child(node, key) or ANY, (*path, key), found)
        elif isinstance(value, dict) and any(isinstance(v, OpenPart) for v in value.values()):
            sub = child(node, key) or ANY
            for entry, item in value.items():
                if isinstance(item, OpenPart):
                    _part(item, child(sub, str(entry)) or ANY, (*path, key, entry), found)
        elif isinstance(value, dict | list) and not (isinstance(part, Channel) and key == "credentials"):
            _references((*path, key), key, value, child(node, key) or ANY, found)
        elif isinstance(value, ValueFrom):
            # A typed string field is never one of OpenClaw's secrets; its references still count.
            _leaf((*path, key), key, value, child(node, key) or ANY, found)


@cache
def _walkable(cls: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """``(field, wire name)`` of the fields that can hold a part, a container or a reference.

    A string, number, boolean or enum field of a typed part is never one of OpenClaw's secrets, so
    the walk, run for every resource on every pass, skips them.
    """
    own: frozenset[str] = getattr(cls, "OWN", frozenset())
    return tuple(
        (name, info.alias or name)
        for name, info in cls.model_fields.items()
        if (info.alias or name) not in own and _may_hold(info.annotation)
    )


def _may_hold(annotation: Any) -> bool:
    if annotation is Any or get_origin(annotation) in (dict, list, tuple):
        return True
    if isinstance(annotation, type):
        return issubclass(annotation, BaseModel)
    return any(_may_hold(arg) for arg in get_args(annotation))


def _references(path: PathT, key: str, value: Any, node: Node, found: list[SecretValue]) -> None:
    """The references in a typed container (its literals are typed values, never OpenClaw's secrets)."""
    if isinstance(value, ValueFrom):
        found.append(SecretValue(path, key, value, admits_secret_ref(node)))
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, dict | list | ValueFrom):
                _references((*path, k), str(k), v, child(node, str(k)) or ANY, found)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, dict | list | ValueFrom):
                _references((*path, i), key, v, items(node) or ANY, found)


def _value(path: PathT, key: str, value: Any, node: Node, found: list[SecretValue]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _value((*path, k), str(k), v, child(node, str(k)) or ANY, found)
    elif isinstance(value, list):
        inner = items(node) or ANY
        for i, v in enumerate(value):
            _value((*path, i), key, v, inner, found)
    else:
        _leaf(path, key, value, node, found)


def _leaf(path: PathT, key: str, value: Any, node: Node, found: list[SecretValue]) -> None:
    if isinstance(value, ValueFrom):
        found.append(SecretValue(path, key, value, admits_secret_ref(node)))
    elif isinstance(value, str) and value.strip():
        secret_input = admits_secret_ref(node)
        if secret_input or is_sensitive_key(key):
            found.append(SecretValue(path, key, value, secret_input))


__all__ = ["SecretValue", "openclaw_secret_values"]
