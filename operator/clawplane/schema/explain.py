"""``clawplane explain``: one field of a kind, read from the generated JSON Schema.

The same schema that is written to ``schemas/`` answers the question, so the
explanation can never disagree with what the validator and editors enforce.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from clawplane.models import KINDS
from clawplane.schema.jsonschema import kind_schema


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
    required: bool = False
    default: Any = None
    has_default: bool = False
    allowed: list[Any] = field(default_factory=list)
    constraints: dict[str, Any] = field(default_factory=dict)
    fields: list[SubField] = field(default_factory=list)

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
        """The non-null alternatives of a node, dereferenced and flattened."""
        node = self.deref(node)
        alts = node.get("anyOf") or node.get("oneOf")
        if not alts:
            return [node]
        out: list[dict[str, Any]] = []
        for alt in alts:
            for b in self.branches(alt):
                if b.get("type") != "null":
                    out.append(b)
        return out

    def type_name(self, node: dict[str, Any]) -> str:
        raw = self.deref_names(node)
        return " | ".join(dict.fromkeys(raw))

    def deref_names(self, node: dict[str, Any]) -> list[str]:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            target = self.defs[name]
            if "enum" in target:
                return ["string (enum)"] if all(isinstance(v, str) for v in target["enum"]) else ["enum"]
            if target.get("type") == "object":
                return [f"object ({name})"]
            return self.deref_names(target)
        alts = node.get("anyOf") or node.get("oneOf")
        if alts:
            names: list[str] = []
            for alt in alts:
                if alt.get("type") != "null":
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
        if kind == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) and "properties" not in node:
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
            if "enum" in b:
                values.extend(b["enum"])
            elif "const" in b:
                values.append(b["const"])
        return list(dict.fromkeys(values))

    def properties(self, node: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
        props: dict[str, Any] = {}
        required: set[str] = set()
        for b in self.branches(node):
            props.update(b.get("properties", {}))
            required.update(b.get("required", []))
        return props, required

    def child(self, node: dict[str, Any], part: str) -> tuple[str, dict[str, Any], bool] | None:
        """The property ``part`` (camelCase, snake_case or any case) of an object/array/map node."""
        for b in self.branches(node):
            if b.get("type") == "array" and isinstance(b.get("items"), dict):
                found = self.child(b["items"], part)
                if found is not None:
                    return found
        props, required = self.properties(node)
        wanted = _norm(part)
        for name, sub in props.items():
            if _norm(name) == wanted:
                return name, sub, name in required
        for b in self.branches(node):
            extra = b.get("additionalProperties")
            if isinstance(extra, dict) and not b.get("properties"):
                return part, extra, False
        return None

    def sub_fields(self, node: dict[str, Any]) -> list[SubField]:
        for b in self.branches(node):
            if b.get("type") == "array" and isinstance(b.get("items"), dict):
                inner = self.sub_fields(b["items"])
                if inner:
                    return inner
        props, required = self.properties(node)
        return [
            SubField(name, self.type_name(sub), name in required, _first_line(sub.get("description", "")))
            for name, sub in props.items()
        ]


def _norm(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def explain(target: str) -> FieldInfo:
    """Explain ``KIND`` or ``KIND.field.path`` (e.g. ``mcpserver.spec.transport``)."""
    kind_name, _, rest = target.strip().partition(".")
    kind = resolve_kind(kind_name)
    schema = kind_schema(kind)
    walker = _Walker(schema)
    node: dict[str, Any] = schema
    path: list[str] = []
    required = True
    for part in [p for p in rest.split(".") if p] if rest else []:
        found = walker.child(node, part)
        if found is None:
            props, _ = walker.properties(node)
            close = difflib.get_close_matches(part, list(props), n=3, cutoff=0.5)
            where = ".".join([kind, *path]) if path else kind
            raise ExplainError(f'field "{part}" does not exist in {where}', close)
        name, node, required = found
        path.append(name)
    description = node.get("description") or walker.deref(node).get("description") or ""
    if not path:
        description = KINDS[kind].__doc__ or description
    constraints: dict[str, Any] = {}
    for b in walker.branches(node):
        constraints.update({k: b[k] for k in _CONSTRAINTS if k in b and k != "const"})
    return FieldInfo(
        kind=kind,
        path=".".join(path),
        type=walker.type_name(node) if path else "object",
        description=description.strip(),
        required=required,
        default=node.get("default"),
        has_default="default" in node,
        allowed=walker.allowed(node),
        constraints=constraints,
        fields=walker.sub_fields(node),
    )


def render_text(info: FieldInfo) -> str:
    """kubectl-explain-like text."""
    lines = [f"KIND:     {info.kind}"]
    if info.path:
        lines.append(f"FIELD:    {info.path} <{info.type}>")
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
