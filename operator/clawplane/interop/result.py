"""What every importer returns, and the checks every imported resource passes before it is kept.

Importers build plain spec dicts; ``resource_docs`` validates each one against its model. A
value clawplane rejects is moved to raw OpenClaw config when the source is an openclaw.json
(its Gateway can carry it), written back as OpenClaw wrote it (``verbatim``), or dropped
with a loss report; a bad list item costs that item only.
A resource is lost only when a field that defines it (command, url, transport…) is invalid.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.interop.positions import ConfigPath
from clawplane.interop.report import LOST, ImportReport
from clawplane.interop.yamlwrite import dump_documents
from clawplane.models import API_VERSION, NAME_RE, Agent, Channel, Gateway, McpServer, ModelProvider, Resource
from clawplane.naming import env_reference, escape_literal

FILES = {
    "Gateway": "gateway.yaml",
    "McpServer": "mcp-servers.yaml",
    "ModelProvider": "model-providers.yaml",
    "Agent": "agents.yaml",
    "Channel": "channels.yaml",
}
MODELS: dict[str, type[Resource]] = {
    "Gateway": Gateway,
    "McpServer": McpServer,
    "ModelProvider": ModelProvider,
    "Agent": Agent,
    "Channel": Channel,
}
# Spec fields that define the resource: without them there is nothing left to import.
_ESSENTIAL = {"type", "command", "url", "transport", "hosting", "agent", "defaultAgent"}
_MAX_RETRIES = 20
_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class ImportResult:
    """Resource documents by kind, and everything the import changed, carried or lost."""

    documents: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    format: str = "openclaw"
    """Which kind of file was read (``openclaw``, ``claude-code``, ``mcp-registry``, …)."""

    @property
    def complete(self) -> bool:
        """True when nothing was lost (no ``import.unmapped``)."""
        return not self.lost

    @property
    def lost(self) -> list[Diagnostic]:
        """One diagnostic per value or entry that could not be imported."""
        return [d for d in self.diagnostics if d.code == LOST]

    @property
    def count(self) -> int:
        """How many resources were imported."""
        return sum(len(docs) for docs in self.documents.values())

    def files(self, *, source: str = "openclaw.json") -> dict[str, str]:
        """YAML text per file name (only kinds that have documents)."""
        header = f"# Imported from {source} by `clawplane import`.\n"
        return {
            FILES[kind]: dump_documents(docs, header=header) for kind, docs in self.documents.items() if docs
        }


RawPath = Callable[[str, str, tuple[str | int, ...]], ConfigPath | None]
"""Where a rejected spec value can be carried as raw OpenClaw config (None: it cannot)."""


def resource_docs(
    kind: str,
    specs: Mapping[str, dict[str, Any]],
    report: ImportReport,
    origin: Callable[[str], ConfigPath],
    raw_path: RawPath | None = None,
) -> list[dict[str, Any]]:
    """Validated resource documents for ``specs`` (name → spec); ``origin`` is each one's source path."""
    docs: list[dict[str, Any]] = []
    for name, spec in specs.items():
        doc = {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}, "spec": spec}
        if _validates(kind, name, doc, report, origin(name), raw_path):
            docs.append(doc)
    return docs


def _validates(
    kind: str,
    name: str,
    doc: dict[str, Any],
    report: ImportReport,
    origin: ConfigPath,
    raw_path: RawPath | None,
) -> bool:
    """Validate ``doc``; a value clawplane rejects is carried raw or dropped, and the rest retried."""
    for _ in range(_MAX_RETRIES):
        try:
            MODELS[kind].model_validate(doc)
            return True
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = _existing(doc, tuple(first["loc"]))
            message = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
            if len(loc) < 2 or loc[0] != "spec" or loc[1] in _ESSENTIAL:
                report.unmapped(origin, f"the {kind} would be invalid ({message})")
                return False
            target = raw_path(kind, name, loc) if raw_path is not None else None
            value = verbatim(_remove(doc, loc))
            if target is not None and value is not UNWRITABLE:
                report.warn(
                    "import.rejected-value",
                    (*origin, *loc[1:]),
                    f"clawplane rejects this value ({first['msg']}); carried as raw OpenClaw config instead",
                )
                report.keep_raw(target, value)
            else:
                report.unmapped((*origin, *loc[1:]), f"clawplane rejects this value ({first['msg']})")
    report.unmapped(origin, f"the {kind} stays invalid")
    return False


UNWRITABLE: Any = object()
"""What ``verbatim`` gives for a reference raw OpenClaw config cannot express (a file or a Secret)."""


def verbatim(value: Any) -> Any:
    """An imported value as raw OpenClaw config writes it: literals escaped, env references as ``${NAME}``."""
    if isinstance(value, str):
        return escape_literal(value)
    if isinstance(value, dict):
        source = value.get("valueFrom")
        if isinstance(source, dict):
            name = source.get("env")
            return env_reference(name) if isinstance(name, str) and set(source) == {"env"} else UNWRITABLE
        found = {key: verbatim(item) for key, item in value.items()}
        return UNWRITABLE if any(item is UNWRITABLE for item in found.values()) else found
    if isinstance(value, list):
        items = [verbatim(item) for item in value]
        return UNWRITABLE if any(item is UNWRITABLE for item in items) else items
    return value


def _existing(doc: dict[str, Any], loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    """The longest prefix of ``loc`` present in ``doc`` (pydantic appends union tags such as ``literal``)."""
    node: Any = doc
    found: list[str | int] = []
    for part in loc:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            node = node[part]
        else:
            break
        found.append(part)
    return tuple(found)


def _remove(doc: dict[str, Any], loc: tuple[str | int, ...]) -> Any:
    node: Any = doc
    for part in loc[:-1]:
        node = node[part]
    return node.pop(loc[-1])


def resource_name(raw: str, taken: set[str], report: ImportReport, path: ConfigPath) -> str | None:
    """A valid, unused resource name for ``raw`` (renamed with a warning when needed), or None."""
    if NAME_RE.match(raw) and raw not in taken:
        taken.add(raw)
        return raw
    base = _INVALID_NAME_CHARS.sub("-", raw.strip()).strip("-.")[:200] or ""
    if not base:
        report.unmapped(path, f"{raw!r} cannot be made a resource name", "rename it")
        return None
    candidate, n = base, 2
    while candidate in taken or not NAME_RE.match(candidate):
        if n > 99:
            report.unmapped(path, f"{raw!r} cannot be made a unique resource name", "rename it")
            return None
        candidate, n = f"{base}-{n}", n + 1
    taken.add(candidate)
    report.warn(
        "import.renamed",
        path,
        f"{raw!r} is not a valid resource name; imported as {candidate!r}",
        "rename it in the source, or keep the new name",
    )
    return candidate


def severity_counts(result: ImportResult) -> tuple[int, int]:
    """``(losses, other warnings)`` of an import."""
    lost = len(result.lost)
    warnings = sum(1 for d in result.diagnostics if d.severity is Severity.WARNING and d.code != LOST)
    return lost, warnings
