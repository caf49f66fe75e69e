"""A resource's ``spec`` as the OpenClaw object it stands for, ready to check against OpenClaw's schema.

The projection keeps every key OpenClaw will see, under the same names and at the same
paths as the spec: the typed fields the user set (as validated, so ``yes`` is already a
boolean) and the OpenClaw keys written beside them, without clawplane's own fields
(``OWN``). Defaults the user did not write are left out: OpenClaw applies its own.

A ``valueFrom`` reference is only known when clawplane renders the file, so it stands in
as a placeholder of the shape OpenClaw takes there (a SecretRef on a SecretInput field, a
``${VAR}`` string elsewhere) and its path is *deferred*: nothing is reported about the
value itself. A ``${VAR}`` string written literally in ``spec.config`` is deferred too,
since OpenClaw substitutes it before it validates. A reference where OpenClaw takes no
string (a number, a boolean, a list) is a problem of its own.

Kind-specific renames, where clawplane renders a typed field under another OpenClaw key
(a Channel's ``credentials`` are the channel's own keys; matrix keeps its DM policy in
``dm``; OpenClaw has no Codex approval mode ``writes``), are applied here as the renderer
applies them, and remembered, so that an issue found at the OpenClaw path points back at
what the user wrote.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from functools import cache
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from clawplane.models import Channel, McpServer, ModelProvider, OpenPart, Resource, ValueFrom
from clawplane.naming import has_substitution
from clawplane.schema.openclaw import (
    ANY,
    Node,
    admits_secret_ref,
    admits_string,
    child,
    declared_keys,
    is_record,
    items,
)

PathT = tuple[str | int, ...]
SECRET_REF_PLACEHOLDER = {"source": "env", "provider": "default", "id": "CLAWPLANE_REFERENCE"}
STRING_PLACEHOLDER = "${CLAWPLANE_REFERENCE}"
MATRIX_DM_KEYS = {"dmPolicy": "policy", "allowFrom": "allowFrom"}
"""A matrix Channel's typed DM fields and where OpenClaw keeps them (``channels.matrix.dm``)."""
OPENCLAW_APPROVAL_FOR_WRITES = "prompt"
"""openclaw.json's mode for Codex's ``writes``: OpenClaw has none; ``prompt`` asks for every tool."""


@dataclass
class Projection:
    """The OpenClaw-shaped value of a spec, and what is needed to report against the spec."""

    value: dict[str, Any] = field(default_factory=dict)
    deferred: list[PathT] = field(default_factory=list)
    """Paths whose value is a placeholder (a reference resolved at render time)."""
    renames: dict[PathT, PathT] = field(default_factory=dict)
    """Projected path prefix → the spec path it came from, where they differ."""
    problems: list[tuple[PathT, str, str]] = field(default_factory=list)
    """``(spec path, message, hint)`` found while projecting (a reference where no string fits)."""
    secret_refs: bool = False
    """Some OpenClaw key holds a mapping with a ``source`` (a SecretRef written as OpenClaw writes it)."""
    unknown: list[tuple[PathT, list[str]]] = field(default_factory=list)
    """Keys written on a typed part that neither clawplane nor OpenClaw knows there, with the keys allowed."""

    def spec_path(self, path: PathT) -> PathT:
        """Where, in the spec, the projected ``path`` was written."""
        for cut in range(len(path), 0, -1):
            hit = self.renames.get(path[:cut])
            if hit is not None:
                return (*hit, *path[cut:])
        return path


def project(part: BaseModel, node: Node) -> Projection:
    """The OpenClaw form of a typed part (usually a resource's ``spec``) that stands for ``node``."""
    out = Projection()
    out.value = _part(part, node, (), out)
    return out


def project_resource(resource: Resource, node: Node) -> Projection:
    """``project`` of a resource's spec, with the renames its kind's renderer applies."""
    spec: BaseModel = getattr(resource, "spec")  # noqa: B009  (every kind but the envelope has one)
    out = project(spec, node)
    if isinstance(resource, Channel):
        _channel(resource, node, out)
    elif isinstance(resource, McpServer):
        _mcp_server(out)
    elif isinstance(resource, ModelProvider):
        _model_provider(out)
    return out


@cache
def _wire_names(cls: type[BaseModel]) -> dict[str, str | None]:
    """Field name → its OpenClaw key, or None for clawplane's own fields (``OWN``)."""
    own: frozenset[str] = getattr(cls, "OWN", frozenset())
    return {
        name: None if (info.alias or name) in own else (info.alias or name)
        for name, info in cls.model_fields.items()
    }


def _part(part: BaseModel, node: Node, path: PathT, out: Projection) -> dict[str, Any]:
    cls = type(part)
    names = _wire_names(cls)
    aligned: bool = getattr(cls, "OPENCLAW_ALIGNED", False)
    value: dict[str, Any] = {}
    # Only what the user wrote (usually a few fields of many) reaches OpenClaw's check.
    for name in part.model_fields_set:
        key = names.get(name)
        if key is None:
            continue
        item = getattr(part, name)
        if item is None:
            continue
        sub = child(node, key)
        if aligned and (not isinstance(item, BaseModel) or isinstance(item, ValueFrom)):
            # Typed validation already took only what OpenClaw takes: the key must exist there.
            if sub is None or key not in declared_keys(node):
                out.unknown.append(((*path, key), []))
            continue
        value[key] = _typed(item, sub if sub is not None else ANY, (*path, key), out)
    if isinstance(part, OpenPart):
        known = [info.alias or name for name, info in cls.model_fields.items()]
        extras = part.openclaw_keys
        if extras:
            declared = declared_keys(node)
            record = is_record(node)
            for key, item in extras.items():
                sub = child(node, key)
                # A key OpenClaw only lets through (a catch-all object) is a typo on a typed part.
                if sub is None or not (key in declared or record):
                    out.unknown.append(((*path, key), [*known, *(k for k in declared if k not in known)]))
                    continue
                value[key] = _raw(item, sub, (*path, key), out)
    return value


_NESTED = (dict, list, tuple, BaseModel, enum.Enum)
"""What a container item must be for the projection to look inside it (plain scalars are kept as they are)."""


def _typed(item: Any, node: Node, path: PathT, out: Projection) -> Any:
    if isinstance(item, ValueFrom):
        return _placeholder(node, path, out)
    if isinstance(item, BaseModel):
        return _part(item, node, path, out)
    if isinstance(item, enum.Enum):
        return item.value
    if isinstance(item, list | tuple | dict) and not any(
        isinstance(v, _NESTED) for v in (item.values() if isinstance(item, dict) else item)
    ):
        return dict(item) if isinstance(item, dict) else list(item)  # scalars only: nothing to project
    if isinstance(item, dict):
        return {k: _typed(v, _entry(node, str(k)), (*path, k), out) for k, v in item.items()}
    if isinstance(item, list | tuple):
        inner = items(node) or ANY
        return [_typed(v, inner, (*path, i), out) for i, v in enumerate(item)]
    return item


def _raw(item: Any, node: Node, path: PathT, out: Projection) -> Any:
    if isinstance(item, ValueFrom):
        return _placeholder(node, path, out)
    if isinstance(item, list) and not any(isinstance(v, _NESTED) for v in item):
        return list(item)
    if isinstance(item, dict):
        if "source" in item:
            out.secret_refs = True
        return {k: _raw(v, _entry(node, str(k)), (*path, k), out) for k, v in item.items()}
    if isinstance(item, list):
        inner = items(node) or ANY
        return [_raw(v, inner, (*path, i), out) for i, v in enumerate(item)]
    return item


def _entry(node: Node, key: str) -> Node:
    found = child(node, key)
    return found if found is not None else ANY


def _placeholder(node: Node, path: PathT, out: Projection) -> Any:
    out.deferred.append(path)
    if admits_secret_ref(node):
        return dict(SECRET_REF_PLACEHOLDER)
    if admits_string(node):
        return STRING_PLACEHOLDER
    out.problems.append(
        (
            path,
            "a valueFrom reference gives a string, and OpenClaw takes no string here",
            "write the value itself",
        )
    )
    return STRING_PLACEHOLDER


def deferred_substitutions(value: Any, path: PathT = ()) -> list[PathT]:
    """Paths of the strings in raw OpenClaw config that use ``${VAR}`` (OpenClaw substitutes them first)."""
    found: list[PathT] = []
    stack: list[tuple[PathT, Any]] = [(path, value)]
    while stack:
        here, node = stack.pop()
        if isinstance(node, dict):
            stack.extend(((*here, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend(((*here, i), v) for i, v in enumerate(node))
        elif isinstance(node, str) and "$" in node and has_substitution(node):
            found.append(here)
    return found


def _channel(resource: Channel, node: Node, out: Projection) -> None:
    value = out.value
    for key, secret in resource.spec.credentials.items():
        if key in value:
            out.problems.append(
                (
                    ("credentials", key),
                    f"{key} is set twice: under credentials and directly under spec",
                    "keep one of them",
                )
            )
            continue
        sub = child(node, key)
        value[key] = _typed(secret, sub if sub is not None else ANY, (key,), out)
        out.renames[(key,)] = ("credentials", key)
        if sub is None:
            out.unknown.append(((key,), []))
            del value[key]
    patterns = resource.spec.mention_patterns
    if isinstance(patterns, dict):
        scope = child(node, "mentionPatterns") or ANY
        value["mentionPatterns"] = _typed(patterns, scope, ("mentionPatterns",), out)
    # Deferred paths of credentials were recorded at the projected path, which is what ``check`` sees.
    if resource.spec.type == "matrix":
        found = value.get("dm")
        dm: dict[str, Any] = found if isinstance(found, dict) else {}
        moved = False
        for typed, inner in MATRIX_DM_KEYS.items():
            if typed in value:
                if inner in dm:
                    out.problems.append(
                        ((typed,), f"{typed} and dm.{inner} are the same OpenClaw key", f"keep dm.{inner}")
                    )
                    del value[typed]
                    continue
                dm = {**dm, inner: value.pop(typed)}
                out.renames[("dm", inner)] = (typed,)
                moved = True
        if moved:
            value["dm"] = dm


def _mcp_server(out: Projection) -> None:
    codex = out.value.get("codex")
    if isinstance(codex, dict) and codex.get("defaultToolsApprovalMode") == "writes":
        out.value["codex"] = {**codex, "defaultToolsApprovalMode": OPENCLAW_APPROVAL_FOR_WRITES}


def _model_provider(out: Projection) -> None:
    models = out.value.get("models")
    if isinstance(models, list):
        # The renderer names a model after its id when the spec gives no name (OpenClaw needs one).
        out.value["models"] = [
            {**m, "name": m.get("name", m.get("id"))} if isinstance(m, dict) else m for m in models
        ]


def unknown_in_raw(
    cls: type[BaseModel], raw: Any, node: Node, path: PathT = ()
) -> list[tuple[PathT, list[str]]]:
    """Keys of a document that failed typed validation that neither the part nor OpenClaw knows there.

    A document that pydantic refused never reaches ``project``; its mistyped keys are still
    reported, together with its other problems.
    """
    if not isinstance(raw, dict):
        return []
    fields = {info.alias or name: info for name, info in cls.model_fields.items()}
    own: frozenset[str] = getattr(cls, "OWN", frozenset())
    found: list[tuple[PathT, list[str]]] = []
    declared = declared_keys(node) if issubclass(cls, OpenPart) else []
    record = issubclass(cls, OpenPart) and is_record(node)
    for key, value in raw.items():
        info = fields.get(key)
        if info is None:
            if not (key in declared or record):
                known = [*fields, *(k for k in declared if k not in fields)]
                found.append(((*path, key), known))
            continue
        sub = child(node, key) or ANY if key not in own else ANY
        found.extend(_unknown_below(info.annotation, value, sub, (*path, key)))
    return found


def _unknown_below(annotation: Any, value: Any, node: Node, path: PathT) -> list[tuple[PathT, list[str]]]:
    part = _part_class(annotation)
    if part is not None and isinstance(value, dict):
        return unknown_in_raw(part, value, node, path)
    found: list[tuple[PathT, list[str]]] = []
    inner = _container_part(annotation)
    if inner is None:
        return found
    kind, part = inner
    if kind == "dict" and isinstance(value, dict):
        entry = child(node, "*") or ANY
        for key, item in value.items():
            found.extend(unknown_in_raw(part, item, child(node, str(key)) or entry, (*path, key)))
    elif kind == "list" and isinstance(value, list):
        entry = items(node) or ANY
        for i, item in enumerate(value):
            found.extend(unknown_in_raw(part, item, entry, (*path, i)))
    return found


def _part_class(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return None if annotation is ValueFrom else annotation
    if get_origin(annotation) in (dict, list):
        return None
    for arg in get_args(annotation):
        found = _part_class(arg)
        if found is not None:
            return found
    return None


def _container_part(annotation: Any) -> tuple[str, type[BaseModel]] | None:
    origin = get_origin(annotation)
    if origin is dict:
        args = get_args(annotation)
        part = _part_class(args[1]) if len(args) == 2 else None
        return ("dict", part) if part is not None else None
    if origin is list:
        args = get_args(annotation)
        part = _part_class(args[0]) if args else None
        return ("list", part) if part is not None else None
    for arg in get_args(annotation):
        found = _container_part(arg)
        if found is not None:
            return found
    return None
