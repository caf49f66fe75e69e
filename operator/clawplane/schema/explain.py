"""``clawplane explain``: one field of a kind, read from the generated JSON Schema.

The same schema that is written to ``schemas/`` answers the question, so the
explanation can never disagree with what the validator and editors enforce. That
includes OpenClaw's keys under ``spec`` (with OpenClaw's titles and descriptions): a
``valueFrom`` reference where OpenClaw takes a string shows as ``| valueFrom`` in the
type, and a Channel key that only some channel types have says which.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from clawplane.models import KINDS
from clawplane.schema.jsonschema import kind_schema
from clawplane.schema.openclawjson import VALUE_FROM_REF
from clawplane.schema.sharing import PREFIX as SHARED_PREFIX


class ExplainError(ValueError):
    """An unknown kind or field; ``suggestions`` holds close matches."""

    def __init__(self, message: str, suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.suggestions = suggestions or []


@dataclass(frozen=True)
class SubField:
    """One property of an object field."""

    name: str
    type: str
    required: bool
    description: str


@dataclass(frozen=True)
class FieldInfo:
    """Everything ``explain`` prints about one field."""

    kind: str
    path: str
    type: str
    description: str
    title: str = ""
    """OpenClaw's title of the key (clawplane's own fields have none)."""
    required: bool = False
    default: Any = None
    has_default: bool = False
    allowed: list[Any] = field(default_factory=list)
    constraints: dict[str, Any] = field(default_factory=dict)
    fields: list[SubField] = field(default_factory=list)
    only_for_types: list[str] = field(default_factory=list)
    """For a Channel key that only some channel types have: those types."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``default`` only when the field has one)."""
        doc = asdict(self)
        if not self.has_default:
            doc.pop("default")
        doc.pop("has_default")
        return doc


_CONSTRAINTS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "const",
)


def _kind_aliases() -> dict[str, str]:
    aliases: dict[str, str] = {}
    for kind, cls in KINDS.items():
        for alias in (kind, cls.PLURAL, *cls.SHORT_NAMES):
            if alias:
                aliases[alias.lower()] = kind
    return aliases


def resolve_kind(name: str) -> str:
    """The canonical kind for a case-insensitive kind, plural or short name."""
    aliases = _kind_aliases()
    found = aliases.get(name.strip().lower())
    if found is not None:
        return found
    close = difflib.get_close_matches(name.lower(), list(aliases), n=3, cutoff=0.6)
    suggestions = sorted({aliases[c] for c in close})
    raise ExplainError(f'unknown kind "{name}"; kinds are {", ".join(KINDS)}', suggestions)


class _Walker:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.defs: dict[str, Any] = schema.get("$defs", {})

    def deref(self, node: dict[str, Any]) -> dict[str, Any]:
        seen = 0
        while "$ref" in node and seen < 32:
            target = self.defs[node["$ref"].rsplit("/", 1)[-1]]
            extra = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target, **extra}
            seen += 1
        return node

    def branches(self, node: dict[str, Any]) -> list[dict[str, Any]]:
        """The alternatives of a node that are neither null nor a ``valueFrom`` reference, dereferenced."""
        node = self.deref(node)
        alts = node.get("anyOf") or node.get("oneOf")
        if not alts:
            return [node]
        out: list[dict[str, Any]] = []
        for alt in alts:
            if alt == {"$ref": VALUE_FROM_REF}:
                continue
            for b in self.branches(alt):
                if b.get("type") != "null":
                    out.append(b)
        return out

    def takes_reference(self, node: dict[str, Any]) -> bool:
        """Whether a ``valueFrom`` reference may stand here instead of the value (OpenClaw's strings)."""
        node = self.deref(node)
        alts = node.get("anyOf") or node.get("oneOf") or []
        return any(alt == {"$ref": VALUE_FROM_REF} or self.takes_reference(alt) for alt in alts)

    def type_name(self, node: dict[str, Any]) -> str:
        raw = self.deref_names(node)
        if self.takes_reference(node):
            raw.append("valueFrom")
        return " | ".join(dict.fromkeys(raw))

    def deref_names(self, node: dict[str, Any]) -> list[str]:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            target = self.defs[name]
            if name.startswith(SHARED_PREFIX):
                return self.deref_names(target)
            if "enum" in target:
                return ["string (enum)"] if all(isinstance(v, str) for v in target["enum"]) else ["enum"]
            if target.get("type") == "object":
                return [f"object ({name})"]
            return self.deref_names(target)
        alts = [a for a in node.get("anyOf") or node.get("oneOf") or [] if a != {"$ref": VALUE_FROM_REF}]
        if alts:
            values = [self.deref(a) for a in alts if self.deref(a).get("type") != "null"]
            constants = [_constants(v) for v in values]
            if values and all(found and all(isinstance(c, str) for c in found) for found in constants):
                return ["string (enum)"]
            names: list[str] = []
            for alt in values:
                names.extend(self.deref_names(alt))
            return names
        if "enum" in node:
            return ["string (enum)"]
        if "const" in node:
            return [f"const {json.dumps(node['const'])}"]
        kind = node.get("type")
        if kind == "array":
            inner = self.type_name(node.get("items", {})) or "any"
            return [f"array of {inner}"]
        if kind == "object" or (kind is None and "properties" in node):
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) and not node.get("properties"):
                return [f"map of string to {self.type_name(extra) or 'any'}"]
            return ["object"]
        if isinstance(kind, str):
            return [kind]
        if isinstance(kind, list):
            return [str(k) for k in kind if k != "null"]
        return ["any"]

    def allowed(self, node: dict[str, Any]) -> list[Any]:
        values: list[Any] = []
        for b in self.branches(node):
            values.extend(_constants(b))
        return list(dict.fromkeys(values))

    def properties(self, node: dict[str, Any]) -> tuple[dict[str, Any], set[str], dict[str, list[str]]]:
        """The properties of an object node (over its alternatives and its per-type branches), the required
        ones, and for a property only some of the per-type branches have, the types that have it."""
        props: dict[str, Any] = {}
        required: set[str] = set()
        per_type: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for b in self.branches(node):
            props.update(b.get("properties", {}))
            required.update(b.get("required", []))
            for variant in b.get("allOf", []):
                if not isinstance(variant, dict) or "then" not in variant:
                    continue
                name = str(variant.get("if", {}).get("properties", {}).get("type", {}).get("const", ""))
                for key, sub in self.deref(variant["then"]).get("properties", {}).items():
                    if isinstance(sub, dict):
                        per_type.setdefault(key, []).append((name, sub))
        only_for: dict[str, list[str]] = {}
        for key, found in per_type.items():
            distinct = list({json.dumps(sub, sort_keys=True): sub for _, sub in found}.values())
            merged = distinct[0] if len(distinct) == 1 else {"anyOf": distinct}
            described = next((self.text(sub) for sub in distinct if self.text(sub)), "")
            props[key] = {"description": described, **merged} if described and len(distinct) > 1 else merged
            if key not in (b.get("properties") or {}) and len(found) < len(b.get("allOf", [])):
                only_for[key] = [name for name, _ in found]
        return props, required, only_for

    def child(self, node: dict[str, Any], part: str) -> tuple[str, dict[str, Any], bool, list[str]] | None:
        """The property ``part`` (camelCase, snake_case or any case) of an object/array/map node."""
        for b in self.branches(node):
            if b.get("type") == "array" and isinstance(b.get("items"), dict):
                found = self.child(b["items"], part)
                if found is not None:
                    return found
        props, required, only_for = self.properties(node)
        wanted = _norm(part)
        for name, sub in props.items():
            if _norm(name) == wanted:
                return name, sub, name in required, only_for.get(name, [])
        values = [
            b["additionalProperties"]
            for b in self.branches(node)
            if isinstance(b.get("additionalProperties"), dict)
        ]
        distinct = list({json.dumps(v, sort_keys=True): v for v in values}.values())
        if distinct:
            # A map's entries, as every alternative (e.g. every channel type) says them.
            return part, distinct[0] if len(distinct) == 1 else {"anyOf": distinct}, False, []
        return None

    def sub_fields(self, node: dict[str, Any]) -> list[SubField]:
        for b in self.branches(node):
            if b.get("type") == "array" and isinstance(b.get("items"), dict):
                inner = self.sub_fields(b["items"])
                if inner:
                    return inner
        props, required, _ = self.properties(node)
        return [
            SubField(name, self.type_name(sub), name in required, _first_line(self.text(sub)))
            for name, sub in props.items()
        ]

    def text(self, node: dict[str, Any]) -> str:
        """A node's description, or its title where it has none (many OpenClaw keys have only a title)."""
        found = self.deref(node)
        text = found.get("description") or found.get("title") or ""
        return str(text)

    def title(self, node: dict[str, Any]) -> str:
        """OpenClaw's title of a node (clawplane's own fields have none)."""
        return str(self.deref(node).get("title") or "")


def _constants(node: dict[str, Any]) -> list[Any]:
    if "enum" in node and isinstance(node["enum"], list):
        return list(node["enum"])
    if "const" in node:
        return [node["const"]]
    return []


def _norm(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def explain(target: str, path: str | None = None) -> FieldInfo:
    """Explain ``KIND`` or ``KIND.field.path`` (``mcpserver.spec.transport``), or ``path`` of a kind."""
    kind_name, _, rest = target.strip().partition(".")
    if path:
        rest = ".".join(p for p in (rest, path.strip()) if p)
    kind = resolve_kind(kind_name)
    schema = kind_schema(kind)
    walker = _Walker(schema)
    node: dict[str, Any] = schema
    walked: list[str] = []
    required = True
    only_for: list[str] = []
    for part in [p for p in rest.split(".") if p] if rest else []:
        found = walker.child(node, part)
        if found is None:
            props, _, _ = walker.properties(node)
            close = difflib.get_close_matches(part, list(props), n=3, cutoff=0.5)
            where = ".".join([kind, *walked]) if walked else kind
            raise ExplainError(f'field "{part}" does not exist in {where}', close)
        name, node, required, only_for = found
        walked.append(name)
    description = walker.text(node)
    if not walked:
        description = KINDS[kind].__doc__ or description
    constraints: dict[str, Any] = {}
    for b in walker.branches(node):
        constraints.update({k: b[k] for k in _CONSTRAINTS if k in b and k != "const"})
    resolved = walker.deref(node)
    return FieldInfo(
        kind=kind,
        path=".".join(walked),
        type=walker.type_name(node) if walked else "object",
        description=description.strip(),
        title=walker.title(node) if walked else "",
        required=required,
        default=resolved.get("default"),
        has_default="default" in resolved,
        allowed=walker.allowed(node),
        constraints=constraints,
        fields=walker.sub_fields(node),
        only_for_types=only_for,
    )


def render_text(info: FieldInfo) -> str:
    """kubectl-explain-like text."""
    lines = [f"KIND:     {info.kind}"]
    if info.path:
        lines.append(f"FIELD:    {info.path} <{info.type}>")
    if info.title:
        lines.append(f"TITLE:    {info.title}")
    if info.only_for_types:
        lines.append(f"ONLY FOR: type {', '.join(info.only_for_types)}")
    lines.append("")
    lines.append("DESCRIPTION:")
    lines.append(f"    {info.description or '(none)'}")
    if info.path:
        lines.append("")
        lines.append(f"REQUIRED: {'yes' if info.required else 'no'}")
        if info.has_default:
            lines.append(f"DEFAULT:  {json.dumps(info.default, ensure_ascii=False)}")
        if info.allowed:
            lines.append("ALLOWED:  " + ", ".join(json.dumps(v, ensure_ascii=False) for v in info.allowed))
        for key, value in info.constraints.items():
            lines.append(f"{key.upper()}: {json.dumps(value, ensure_ascii=False)}")
    if info.fields:
        lines.append("")
        lines.append("FIELDS:")
        for sub in info.fields:
            req = " -required-" if sub.required else ""
            lines.append(f"  {sub.name}\t<{sub.type}>{req}")
            if sub.description:
                lines.append(f"    {sub.description}")
    return "\n".join(lines)


__all__ = ["ExplainError", "FieldInfo", "SubField", "explain", "render_text", "resolve_kind"]
