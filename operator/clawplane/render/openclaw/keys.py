"""The OpenClaw keys a typed part holds beside its typed fields, rendered as OpenClaw reads them.

Values are written as the user gave them; a ``valueFrom`` reference becomes what OpenClaw
can read at that place (``SecretRenderer``): a SecretRef object on a SecretInput field
(OpenClaw's schema says which), ``${NAME}`` elsewhere. Strings are escaped against
``${VAR}`` substitution by ``finalize`` like every other literal a resource holds.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from clawplane.models import OpenPart, ValueFrom
from clawplane.render.secretvalues import SecretRenderer
from clawplane.schema.openclaw import ANY, Node, admits_secret_ref, child, items


class KeyRenderer:
    """Renders OpenClaw keys for one resource (its folder, its secrets, its diagnostics)."""

    def __init__(self, *, secrets: SecretRenderer, base_dir: Path, resource: str) -> None:
        self.secrets = secrets
        self.base_dir = base_dir
        self.resource = resource

    def keys(self, part: BaseModel, node: Node | None, path: str) -> dict[str, Any]:
        """The OpenClaw keys written on ``part`` (at spec path ``path``), rendered; {} if none."""
        extras = part.openclaw_keys if isinstance(part, OpenPart) else {}
        if not extras:
            return {}
        here = node if node is not None else ANY
        out: dict[str, Any] = {}
        for key, value in extras.items():
            rendered = self.value(value, _at(here, key), f"{path}.{key}" if path else key)
            if rendered is not _LEFT_OUT:
                out[key] = rendered
        return out

    def part(
        self, part: BaseModel, node: Node | None, path: str, *, exclude_unset: bool = False
    ) -> dict[str, Any]:
        """A whole typed part by OpenClaw's names: its fields (but clawplane's own) and its OpenClaw keys."""
        here = node if node is not None else ANY
        own: frozenset[str] = getattr(type(part), "OWN", frozenset())
        given = part.model_fields_set
        out: dict[str, Any] = {}
        for name, info in type(part).model_fields.items():
            key = info.alias or name
            if key in own or (exclude_unset and name not in given):
                continue
            value = getattr(part, name)
            if value is None:
                continue
            rendered = self.typed(value, _at(here, key), f"{path}.{key}" if path else key, exclude_unset)
            if rendered is not _LEFT_OUT:
                out[key] = rendered
        out.update(self.keys(part, here, path))
        return out

    def typed(self, value: Any, node: Node, path: str, exclude_unset: bool = False) -> Any:
        """A typed field's value by OpenClaw's names."""
        if isinstance(value, BaseModel) and not isinstance(value, ValueFrom):
            return self.part(value, node, path, exclude_unset=exclude_unset)
        if isinstance(value, enum.Enum):
            return value.value
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                rendered = self.typed(item, _at(node, str(key)), f"{path}.{key}", exclude_unset)
                if rendered is not _LEFT_OUT:
                    out[key] = rendered
            return out
        if isinstance(value, list | tuple):
            inner = items(node) or ANY
            return [self.typed(v, inner, f"{path}.{i}", exclude_unset) for i, v in enumerate(value)]
        return self.value(value, node, path)

    def value(self, value: Any, node: Node, path: str) -> Any:
        """A raw OpenClaw value with its references rendered (``_LEFT_OUT`` when one cannot be)."""
        if isinstance(value, ValueFrom):
            rendered = self.secrets.render(
                value,
                base_dir=self.base_dir,
                secret_input=admits_secret_ref(node),
                resource=self.resource,
                path=f"spec.{path}",
            )
            return _LEFT_OUT if rendered is None else rendered
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                rendered = self.value(item, _at(node, str(key)), f"{path}.{key}")
                if rendered is not _LEFT_OUT:
                    out[key] = rendered
            return out
        if isinstance(value, list):
            inner = items(node) or ANY
            kept = [self.value(v, inner, f"{path}.{i}") for i, v in enumerate(value)]
            return [v for v in kept if v is not _LEFT_OUT]
        return value


class _LeftOut:
    """A value that could not be rendered (its reference could not be written); its key is dropped."""

    def __repr__(self) -> str:
        return "<left out>"


_LEFT_OUT: Any = _LeftOut()


def _at(node: Node, key: str) -> Node:
    found = child(node, key)
    return found if found is not None else ANY
