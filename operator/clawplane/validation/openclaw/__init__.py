"""Everything that reaches openclaw.json, checked against OpenClaw's own config schema at its line.

Each resource's spec is projected onto the OpenClaw object it stands for
(``projection``) and checked against that object's node of the schema; the Gateway's raw
``spec.config`` is checked against the whole schema. Each issue becomes a diagnostic at the
key or value that holds the mistake, with the OpenClaw path in its message and a hint
(a "did you mean" for an unknown key, the allowed values of an enum).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from clawplane.diagnostics import Diagnostic, Location, Severity
from clawplane.loading import SourceDocument, format_path
from clawplane.models import CHANNEL_TYPES, ApprovalMode, Channel, Gateway, McpServer, OpenPart, Resource
from clawplane.schema.openclaw import OPENCLAW_VERSION, config_schema, declared_keys, node_at
from clawplane.schema.openclaw.check import Issue, check, key_hint
from clawplane.schema.openclaw.homes import GATEWAY_CHANNEL_KEYS, OTHER_KINDS, dotted, home_path
from clawplane.schema.openclaw.refinements import refine
from clawplane.validation.openclaw.projection import (
    PathT,
    Projection,
    deferred_substitutions,
    project_resource,
    unknown_in_raw,
)

E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
UNCHECKED_HINT = "if your OpenClaw is newer than {v} and knows it, list its path in spec.configUnchecked"


def check_openclaw(doc: SourceDocument, resource: Resource) -> list[Diagnostic]:
    """Every way ``resource`` would make OpenClaw refuse openclaw.json, at the line that causes it."""
    home = home_path(resource)
    if home is None:
        return []
    node = node_at(home)
    if node is None:
        return []
    projection = project_resource(resource, node)
    report = _Reporter(doc, resource)
    for path, message, hint in projection.problems:
        where = _openclaw_path(home, resource, path)
        report.add(E, "openclaw.value-from", projection.spec_path(path), message, hint, openclaw=where)
    for path, known in projection.unknown:
        name = str(path[-1])
        hint = key_hint(name, known) if known else f"OpenClaw's {dotted(home, resource)} has no such key"
        spec_path = projection.spec_path(path)
        report.add(E, "schema.unknown-field", spec_path, f"unknown field {name!r}", hint, key=True)
    for issue in check(projection.value, node, deferred=projection.deferred):
        _report_issue(report, issue, projection, home, resource)
    for issue in _refined(projection, home, resource):
        _report_issue(report, issue, projection, home, resource)
    if isinstance(resource, Gateway):
        _reserved_sections(report, resource)
        _raw_config(report, resource)
    if isinstance(resource, McpServer):
        _codex_writes(report, resource)
    return report.found


def _refined(projection: Projection, home: tuple[str, ...], resource: Resource) -> list[Issue]:
    """OpenClaw's cross-field rules, run on the spec placed where it sits in openclaw.json."""
    concrete = tuple(resource.name if part == "*" else part for part in home)
    wrapped: Any = projection.value
    for part in reversed(concrete):
        wrapped = {part: wrapped}
    out = []
    deferred = set(projection.deferred)
    for issue in refine(wrapped, secret_refs=projection.secret_refs):
        if issue.path[: len(concrete)] != concrete:
            continue
        path = issue.path[len(concrete) :] or (("type",) if isinstance(resource, Channel) else ())
        if path not in deferred:
            out.append(Issue(path, issue.kind, issue.message, issue.hint, issue.at_key))
    return out


def _codex_writes(report: _Reporter, server: McpServer) -> None:
    codex = server.spec.codex
    if codex is not None and codex.default_tools_approval_mode is ApprovalMode.WRITES:
        report.add(
            W,
            "openclaw.approval-mode-mapped",
            ("codex", "defaultToolsApprovalMode"),
            'OpenClaw has no approval mode "writes": openclaw.json gets "prompt" (every tool asks); '
            'Codex\'s config.toml keeps "writes"',
            'use "prompt", "auto" or "approve" to say what OpenClaw does',
        )


def unknown_fields_of_invalid(
    doc: SourceDocument, cls: type[Resource], data: dict[str, Any]
) -> list[Diagnostic]:
    """The unknown keys of a document that failed typed validation (reported with its other errors)."""
    spec = data.get("spec")
    field = cls.model_fields.get("spec")
    spec_cls: Any = field.annotation if field is not None else None
    if not isinstance(spec, dict) or not (isinstance(spec_cls, type) and issubclass(spec_cls, BaseModel)):
        return []
    home = _raw_home(cls.KIND, spec)
    node = node_at(home) if home is not None else None
    name = data.get("metadata", {}).get("name") if isinstance(data.get("metadata"), dict) else None
    report = _Reporter(doc, f"{cls.KIND}/{name}" if isinstance(name, str) else cls.KIND)
    for path, known in unknown_in_raw(spec_cls, spec, node if node is not None else {}):
        name = str(path[-1])
        hint = key_hint(name, known)
        report.add(E, "schema.unknown-field", path, f"unknown field {name!r}", hint, key=True)
    return report.found


def _raw_home(kind: str, spec: dict[str, Any]) -> tuple[str, ...] | None:
    if kind == "Channel":
        return ("channels", spec["type"]) if isinstance(spec.get("type"), str) else None
    return RAW_HOMES.get(kind)


RAW_HOMES: dict[str, tuple[str, ...]] = {
    "Gateway": (),
    "McpServer": ("mcp", "servers", "*"),
    "Agent": ("agents", "entries", "*"),
    "ModelProvider": ("models", "providers", "*"),
}


class _Reporter:
    def __init__(self, doc: SourceDocument, resource: Resource | str) -> None:
        self.doc = doc
        self.label = resource if isinstance(resource, str) else resource.key
        self.found: list[Diagnostic] = []

    def add(
        self,
        severity: Severity,
        code: str,
        spec_path: PathT,
        message: str,
        hint: str = "",
        *,
        key: bool = False,
        openclaw: str = "",
        base: PathT = ("spec",),
    ) -> None:
        path = (*base, *spec_path)
        positions = self.doc.positions
        pos = positions.of_key(path) if key else positions.of_value(path)
        text = f"{message} (OpenClaw {openclaw})" if openclaw else message
        where = Location(self.doc.file, *pos)
        self.found.append(Diagnostic(severity, code, text, where, format_path(path), hint, self.label))


def _openclaw_path(home: tuple[str, ...], resource: Resource, path: PathT) -> str:
    head = dotted(home, resource)
    tail = ".".join(str(p) for p in path)
    return ".".join(p for p in (head, tail) if p)


def _report_issue(
    report: _Reporter, issue: Issue, projection: Projection, home: tuple[str, ...], resource: Resource
) -> None:
    spec_path = projection.spec_path(issue.path)
    code = "schema.unknown-field" if issue.kind == "unknown-key" else f"openclaw.{issue.kind}"
    report.add(
        E,
        code,
        spec_path,
        issue.message.replace("unknown key", "unknown field", 1),
        issue.hint,
        key=issue.at_key,
        openclaw=_openclaw_path(home, resource, issue.path),
    )


def _reserved_sections(report: _Reporter, gateway: Gateway) -> None:
    """Gateway keys that other resources declare (one McpServer, Agent, … per entry)."""
    spec = gateway.spec
    parts: dict[tuple[str, ...], OpenPart] = {
        ("mcp",): spec.mcp,
        ("agents",): spec.agents,
        ("models",): spec.models,
    }
    for (section, key), kind in OTHER_KINDS.items():
        if key in parts[(section,)].openclaw_keys:
            report.add(
                E,
                "gateway.section-of-another-kind",
                (section, key),
                f"{section}.{key} is declared by {kind} resources, one per entry, not by the Gateway",
                f"write each entry as a {kind} (clawplane import turns an openclaw.json into them)",
                key=True,
            )
    channels = spec.openclaw_keys.get("channels")
    if isinstance(channels, dict):
        for key in channels:
            if key not in GATEWAY_CHANNEL_KEYS:
                what = "a Channel resource" if key in CHANNEL_TYPES else "a Channel resource of that type"
                report.add(
                    E,
                    "gateway.section-of-another-kind",
                    ("channels", key),
                    f"channels.{key} is declared by {what}, not by the Gateway",
                    f"write it as kind: Channel with spec.type: {key}; the Gateway keeps only "
                    "channels.defaults and channels.modelByChannel",
                    key=True,
                )


def _raw_config(report: _Reporter, gateway: Gateway) -> None:
    raw: dict[str, Any] = gateway.spec.config
    unchecked = [tuple(p.split(".")) for p in gateway.spec.config_unchecked]
    for index, path in enumerate(unchecked):
        if not _present(raw, path):
            report.add(
                W,
                "openclaw.unchecked-unused",
                ("configUnchecked", index),
                f"spec.config has nothing at {'.'.join(path)}",
                "remove it from configUnchecked, or fix the path",
            )
    if not raw:
        return
    base: PathT = ("spec", "config")
    deferred = deferred_substitutions(raw)
    for issue in [*check(raw, config_schema(), deferred=deferred), *refine(raw)]:
        if any(issue.path[: len(p)] == p for p in unchecked):
            continue
        hint = issue.hint
        value = _value_at(raw, issue.path)
        if isinstance(value, dict) and "valueFrom" in value:
            hint = (
                "spec.config is raw OpenClaw config, where valueFrom means nothing: write this key "
                f"by name under spec ({'.'.join(map(str, issue.path))}), where valueFrom is rendered"
            )
        elif issue.kind == "unknown-key":
            hint = f"{hint}; or " if hint else ""
            hint += UNCHECKED_HINT.format(v=OPENCLAW_VERSION)
        report.add(
            E,
            "openclaw.unknown-key" if issue.kind == "unknown-key" else f"openclaw.{issue.kind}",
            issue.path,
            issue.message,
            hint,
            key=issue.at_key,
            openclaw=".".join(map(str, issue.path)),
            base=base,
        )
    top = declared_keys(config_schema())
    carried = {path[0] for path in deferred} | {path[0] for path in unchecked if path}
    for key in raw:
        if key in ("models", "session") or key not in top or key in carried:
            # models/session are refused outright (``validation.providers``); a ${VAR} mixed with text
            # or a key of a newer OpenClaw can only be written here.
            continue
        report.add(
            INFO,
            "openclaw.config-has-home",
            (key,),
            f"spec.config.{key} has a typed home: spec.{key}",
            f"move it to spec.{key}: it is checked the same way there, and valueFrom works",
            key=True,
            base=base,
        )


def _present(raw: Any, path: Iterable[str]) -> bool:
    node = raw
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _value_at(raw: Any, path: PathT) -> Any:
    node = raw
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


__all__ = ["check_openclaw", "unknown_fields_of_invalid"]
