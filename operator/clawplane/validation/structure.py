"""Structural validation: one document → one typed resource, or diagnostics.

Checks the envelope (apiVersion, kind, metadata.name), reports legacy spellings,
then validates against the pydantic model and turns every pydantic error into a
diagnostic at the exact key or value it concerns, with a hint where we can give one.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from clawplane.diagnostics import Diagnostic, Location, Severity
from clawplane.loading import PathT, SourceDocument, format_path
from clawplane.models import API_VERSION, KINDS, Resource
from clawplane.validation.legacy import check_legacy_mcp_spec
from clawplane.validation.openclaw import check_openclaw, unknown_fields_of_invalid
from clawplane.validation.result import LoadedResource
from clawplane.validation.suggest import allowed_fields, did_you_mean

_TYPE_WORDS = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean",
    "dict_type": "a mapping",
    "list_type": "a list",
    "model_type": "a mapping",
    "int_parsing": "an integer",
    "bool_parsing": "a boolean",
    "float_parsing": "a number",
    "string_sub_type": "a string",
    "model_attributes_type": "a mapping",
    "int_from_float": "an integer",
}


def validate_document(doc: SourceDocument) -> tuple[LoadedResource | None, list[Diagnostic]]:
    """Validate one document; returns the resource (None if invalid) and its diagnostics."""
    data = doc.data
    where = doc.location(doc.positions.of_value(()))
    if not isinstance(data, dict):
        got = type(data).__name__ if not isinstance(data, list) else "a list"
        return None, [
            Diagnostic(
                Severity.ERROR,
                "schema.not-a-mapping",
                f"a resource must be a mapping, got {got}",
                where,
                hint="start the document with apiVersion:, kind:, metadata: and spec:",
            )
        ]
    envelope = _check_envelope(doc, data)
    if envelope:
        return None, envelope
    cls = KINDS[data["kind"]]
    label = _label(data)
    found: list[Diagnostic] = []
    payload = data
    if cls.KIND == "McpServer" and isinstance(data.get("spec"), dict):
        spec, found = check_legacy_mcp_spec(doc, data["spec"], label)
        payload = {**data, "spec": spec}
    try:
        resource = cls.model_validate(payload)
    except ValidationError as exc:
        found.extend(_translate(doc, payload, cls, exc, label))
        found.extend(unknown_fields_of_invalid(doc, cls, payload))
        return None, found
    openclaw = check_openclaw(doc, resource)
    if openclaw:
        found.extend(openclaw)
        if any(d.is_error for d in openclaw):
            return None, found
    return LoadedResource(resource, doc), found


def _label(data: dict[str, Any]) -> str:
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return f"{data.get('kind')}/{name}" if isinstance(name, str) else str(data.get("kind"))


def _check_envelope(doc: SourceDocument, data: dict[str, Any]) -> list[Diagnostic]:
    out: list[Diagnostic] = []

    def err(path: PathT, code: str, message: str, hint: str, *, key: bool = False) -> None:
        pos = doc.positions.of_key(path) if key else doc.positions.of_value(path)
        out.append(Diagnostic(Severity.ERROR, code, message, doc.location(pos), format_path(path), hint))

    api = data.get("apiVersion")
    if api is None:
        err((), "schema.missing-api-version", "missing apiVersion", f"add apiVersion: {API_VERSION}")
    elif api != API_VERSION:
        err(
            ("apiVersion",),
            "schema.api-version",
            f"unsupported apiVersion {api!r}",
            f"use apiVersion: {API_VERSION}",
        )
    kind = data.get("kind")
    if kind is None:
        err((), "schema.missing-kind", "missing kind", f"add kind: one of {', '.join(KINDS)}")
    elif not isinstance(kind, str) or kind not in KINDS:  # a list or mapping is not hashable
        guess = did_you_mean(str(kind), list(KINDS))
        hint = f"did you mean {guess}?" if guess else f"use one of {', '.join(KINDS)}"
        err(("kind",), "schema.unknown-kind", f"unknown kind {kind!r}", hint)
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        err(
            ("metadata",) if meta is not None else (),
            "schema.missing-name",
            "missing metadata.name",
            "add a metadata mapping with a name",
        )
    elif "name" not in meta:
        err(("metadata",), "schema.missing-name", "missing metadata.name", "add name: under metadata")
    return out


def _data_path(data: Any, loc: tuple[str | int, ...], *, keep_last: bool) -> PathT:
    """Map a pydantic loc onto the document, dropping union tags and class names."""
    path: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            node = node[part]
            path.append(part)
        elif keep_last and i == len(loc) - 1:
            path.append(part)
    return tuple(path)


def _translate(
    doc: SourceDocument, data: Any, cls: type[Resource], exc: ValidationError, label: str
) -> list[Diagnostic]:
    groups: dict[PathT, list[dict[str, Any]]] = {}
    for error in exc.errors(include_url=False):
        path = _data_path(data, tuple(error["loc"]), keep_last=error["type"] == "missing")
        groups.setdefault(path, []).append(dict(error))
    out = []
    for path, errors in groups.items():
        for message, hint, at_key in _messages(cls.KIND, path, errors):
            pos = doc.positions.of_key(path) if at_key else doc.positions.of_value(path)
            if errors[0]["type"] == "missing":
                pos = doc.positions.of_value(path[:-1])
            out.append(
                Diagnostic(
                    Severity.ERROR,
                    _code(errors[0]["type"]),
                    message,
                    Location(doc.file, *pos),
                    format_path(path),
                    hint,
                    label,
                )
            )
    return out


def _code(error_type: str) -> str:
    if error_type == "extra_forbidden":
        return "schema.unknown-field"
    if error_type == "missing":
        return "schema.missing-field"
    if error_type in _TYPE_WORDS:
        return "schema.type"
    if error_type in ("enum", "literal_error"):
        return "schema.enum"
    return "schema.invalid"


def _messages(kind: str, path: PathT, errors: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """(message, hint, point-at-key) for the errors that concern one path."""
    types = [e["type"] for e in errors]
    if all(t in _TYPE_WORDS for t in types):
        words = list(dict.fromkeys(_TYPE_WORDS[t] for t in types))
        expected = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
        if "a mapping" in words and len(words) > 1:
            expected = expected.replace("a mapping", "{valueFrom: …}")
        got = _describe(errors[0]["input"])
        return [(f"expected {expected}, got {got}", "", False)]
    out = []
    for e in errors:
        t = e["type"]
        field = str(path[-1]) if path else ""
        if t == "extra_forbidden":
            choices = allowed_fields(kind, path[:-1])
            guess = did_you_mean(field, choices)
            hint = (
                f"did you mean {guess!r}?"
                if guess
                else (f"allowed fields here: {', '.join(choices)}" if choices else "remove it")
            )
            out.append((f"unknown field {field!r}", hint, True))
        elif t == "missing":
            out.append((f"missing required field {field!r}", f"add {field}:", False))
        elif t in ("enum", "literal_error"):
            expected = str(e.get("ctx", {}).get("expected", ""))
            options = [c.strip(" '") for c in expected.replace(" or ", ", ").split(",")]
            guess = did_you_mean(str(e["input"]), options)
            hint = f"did you mean {guess!r}?" if guess else f"use one of {expected}"
            if len(options) > 8:
                expected = f"one of {len(options)} values"
            out.append((f"invalid value {e['input']!r}: expected {expected}", hint, False))
        elif t in ("greater_than", "greater_than_equal", "less_than_equal", "less_than"):
            bound_words = {
                "greater_than": "greater than",
                "greater_than_equal": "at least",
                "less_than_equal": "at most",
                "less_than": "less than",
            }[t]
            bound = next(iter(e.get("ctx", {}).values()), "")
            out.append((f"must be {bound_words} {bound}, got {e['input']!r}", "", False))
        elif t == "string_pattern_mismatch":
            out.append((f"invalid value {e['input']!r}: {_pattern_words(path)}", _pattern_hint(path), False))
        elif t == "value_error":
            out.append((str(e["msg"]).removeprefix("Value error, "), "", False))
        elif t in ("too_short", "string_too_short"):
            out.append(("must not be empty", "give at least one value, or remove the field", False))
        else:
            out.append((str(e["msg"]), "", False))
    return out


def _pattern_words(path: PathT) -> str:
    if path[:2] == ("metadata", "name"):
        return "not a valid name"
    if "agents" in path:
        return "not a valid agent id"
    return "does not match the required format"


def _pattern_hint(path: PathT) -> str:
    if path[:2] == ("metadata", "name"):
        return "use letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
    if "agents" in path:
        return "agent ids match ^[a-z0-9][a-z0-9_-]{0,63}$"
    return ""


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) < 40 else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
