"""OpenClaw's keys in the published schemas: each open part gets the keys of the OpenClaw object it is.

A kind's schema, as pydantic writes it, says nothing about OpenClaw's keys: an ``OpenPart``
takes them as "anything else". Here the schema is walked from ``spec`` with the OpenClaw node
it stands for alongside, the way ``clawplane.validation.openclaw.projection`` walks a value
(typed fields by their wire names, except the part's ``OWN``; a mapping of parts steps into the
record's value node; a list into its items). Wherever an open part sits, a copy of its
definition made for that place gets, beside the typed fields, every key OpenClaw declares there
(OpenClaw's own schema of it, see ``openclawjson``) and refuses the rest (a record keeps its
value schema). The same part class can sit at several places (a ``ToolPolicy`` is an agent's
``tools`` and the Gateway's ``tools``), so the copies are per place, not per class.

OpenClaw's ``required`` keys of a part's own level are not repeated: a typed field, a default
or (for a Channel) ``credentials`` can give them, which only ``clawplane validate`` knows.

A Channel's spec stands for ``channels.<type>``: its typed fields are common and the rest is
one ``if``/``then`` per channel type. The Gateway leaves out the sections other kinds declare.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from clawplane.models import CHANNEL_TYPES
from clawplane.schema.openclaw import Node, child, declared_keys, is_record, items, node_at
from clawplane.schema.openclaw.homes import GATEWAY_CHANNEL_KEYS, OTHER_KINDS
from clawplane.schema.openclawjson import ANNOTATIONS, convert, described

OPEN_VALUE = "OpenValue"
"""The definition pydantic writes for a free OpenClaw value (``models.openparts.OpenValue``)."""
HOMES: dict[str, tuple[str, ...]] = {
    "Gateway": (),
    **{kind: (*path, "*") for path, kind in OTHER_KINDS.items()},
}
"""The OpenClaw node each kind's spec stands for (a Channel's depends on its ``type``)."""
_ENTRY_NAMES = {"Agent": "<id>", "ModelProvider": "<id>", "McpServer": "<name>"}
UNDESCRIBED = "The OpenClaw key "
"""How the description of an OpenClaw key that OpenClaw leaves undescribed starts (its path follows)."""

Path = tuple[str, ...]


@dataclass(frozen=True)
class Catalog:
    """pydantic's definitions of every model, and which of them are open parts (with their ``OWN``)."""

    defs: dict[str, Any]
    parts: dict[str, frozenset[str]]


class Placer:
    """Puts OpenClaw's keys into the open parts of one kind's schema, one copy per place."""

    def __init__(self, catalog: Catalog, kind: str) -> None:
        self.catalog = catalog
        self.kind = kind
        self.open = _open_defs(catalog)

    def spec(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The kind's ``spec`` property with OpenClaw's keys in place (as it was for a Skill)."""
        if self.kind == "Channel":
            return {**self._channel(), **_siblings(spec)}
        home = HOMES.get(self.kind)
        node = node_at(home) if home is not None else None
        if home is None or node is None:
            return spec
        placed: dict[str, Any] = self.at(spec, node, home)
        return placed

    def at(self, schema: Any, node: Node | None, path: Path) -> Any:
        """``schema`` (pydantic's, of a value at OpenClaw ``node``) with the open parts under it placed."""
        if node is None or not isinstance(schema, dict):
            return schema
        ref = schema.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if name == OPEN_VALUE:
                return {**convert(node), **_siblings(schema)}
            if name not in self.open:
                return schema
            body = (
                self.part(name, node, path)
                if name in self.catalog.parts
                else self.at(self.catalog.defs[name], node, path)
            )
            return {**body, **_siblings(schema)}
        out = dict(schema)
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                out[key] = [self.at(branch, node, path) for branch in schema[key]]
        props = schema.get("properties")
        if isinstance(props, dict):
            out["properties"] = {k: self.at(v, child(node, k), (*path, k)) for k, v in props.items()}
        if isinstance(schema.get("items"), dict):
            out["items"] = self.at(schema["items"], items(node), (*path, "[]"))
        if isinstance(schema.get("additionalProperties"), dict):
            out["additionalProperties"] = self.at(
                schema["additionalProperties"], _record_values(node), (*path, "*")
            )
        return out

    def part(self, name: str, node: Node, path: Path) -> dict[str, Any]:
        """A copy of open part ``name``'s definition for the place ``node``: typed fields, then OpenClaw's."""
        definition = self.catalog.defs[name]
        own = self.catalog.parts[name]
        typed: dict[str, Any] = definition.get("properties", {})
        props = {k: v if k in own else self.at(v, child(node, k), (*path, k)) for k, v in typed.items()}
        for key in declared_keys(node):
            if key in props or self._reserved(path, key):
                continue
            found = child(node, key)
            if found is not None:
                props[key] = self._openclaw_key(found, (*path, key))
        values = _record_values(node) if is_record(node) else None
        out: dict[str, Any] = {}
        for key, value in definition.items():
            if key == "properties":
                out[key] = props
            elif key == "additionalProperties":
                out[key] = convert(values) if values is not None else False
            else:
                out[key] = value
        out.setdefault("properties", props)
        out.setdefault("additionalProperties", convert(values) if values is not None else False)
        return out

    def _reserved(self, path: Path, key: str) -> bool:
        return self.kind == "Gateway" and (*path, key) in OTHER_KINDS

    def _openclaw_key(self, node: Node, path: Path) -> dict[str, Any]:
        converted: dict[str, Any] = convert(node)
        if self.kind == "Gateway" and path == ("channels",):
            # Each channel type is a Channel resource; the Gateway keeps the shared keys only.
            props = converted.get("properties", {})
            converted = {
                **converted,
                "properties": {k: v for k, v in props.items() if k in GATEWAY_CHANNEL_KEYS},
                "additionalProperties": False,
            }
        if not any(k in converted for k in ANNOTATIONS):
            # OpenClaw documents many keys only by their children; say at least where this one goes.
            converted = described(converted, f"{UNDESCRIBED}``{self._dotted(path)}``.")
        return converted

    def _dotted(self, path: Path) -> str:
        home = HOMES.get(self.kind, ("channels", "<type>"))
        words: list[str] = []
        for i, part in enumerate(path):
            if part == "[]":
                words[-1:] = [f"{words[-1]}[]"] if words else ["[]"]
            elif self.kind == "Channel" and i == 1:
                words.append("<type>")  # the same words for every type, so the CRD's merged spec can say them
            elif part == "*":
                words.append(_ENTRY_NAMES.get(self.kind, "<name>") if i < len(home) else "<key>")
            else:
                words.append(part)
        return ".".join(words)

    def _channel(self) -> dict[str, Any]:
        base: dict[str, Any] = self.catalog.defs["ChannelSpec"]
        typed: dict[str, Any] = base.get("properties", {})
        branches = []
        for channel in CHANNEL_TYPES:
            node = node_at(("channels", channel))
            if node is None:
                continue
            full = self.part("ChannelSpec", node, ("channels", channel))
            # A typed field that is the same everywhere stays in the common part only.
            then = {k: True if typed.get(k) == v else v for k, v in full["properties"].items()}
            branches.append(
                {
                    "if": {"properties": {"type": {"const": channel}}, "required": ["type"]},
                    "then": {"properties": then, "additionalProperties": full["additionalProperties"]},
                }
            )
        common = {k: v for k, v in base.items() if k != "additionalProperties"}
        return {**common, "allOf": branches}


def _siblings(schema: dict[str, Any]) -> dict[str, Any]:
    """What a property says beside its ``$ref`` (its description, default): it wins over the definition's."""
    return {k: v for k, v in schema.items() if k != "$ref"}


def _record_values(node: Node | None) -> Node | None:
    if node is None:
        return None
    found = child(node, "*") if is_record(node) else None
    if found is not None:
        return found
    for branch in node.get("anyOf") or node.get("oneOf") or [node]:
        extra = branch.get("additionalProperties") if isinstance(branch, dict) else None
        if isinstance(extra, dict):
            return extra
    return None


def _open_defs(catalog: Catalog) -> set[str]:
    """Definitions that are, or hold, an open part or a free OpenClaw value."""
    refs = {name: set(_refs(body)) for name, body in catalog.defs.items()}
    found = set(catalog.parts) | {OPEN_VALUE}
    changed = True
    while changed:
        grown = {name for name, used in refs.items() if used & found} - found
        found |= grown
        changed = bool(grown)
    return found


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield ref.rsplit("/", 1)[-1]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


__all__ = ["HOMES", "OPEN_VALUE", "UNDESCRIBED", "Catalog", "Placer"]
