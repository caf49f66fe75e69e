"""References of resources that failed schema validation, checked from their raw documents.

A resource with a schema error has no typed model, but its references are usually still
readable: ``examples/invalid/references.yaml`` has an enum error next to a dangling
``codex.agents`` entry, and both are reported in one run. Only values of the expected type
are checked; anything else is the schema error's business.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.loading import PathT, SourceDocument, format_path

# kind -> paths (under the document) of lists or single names, and the kind they name.
_REFERENCES: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "McpServer": ((("spec", "codex", "agents"), "Agent"),),
    "Agent": ((("spec", "mcpServers"), "McpServer"),),
    "Channel": ((("spec", "agent"), "Agent"),),
    "Gateway": ((("spec", "agents", "defaultAgent"), "Agent"),),
}


@dataclass(frozen=True, slots=True)
class RawResource:
    """A document that names a resource of a known kind but did not validate."""

    kind: str
    name: str
    doc: SourceDocument

    @property
    def key(self) -> str:
        """``Kind/name``."""
        return f"{self.kind}/{self.name}"

    def diagnostic(
        self, severity: Severity, code: str, message: str, path: PathT, *, hint: str = ""
    ) -> Diagnostic:
        """A diagnostic pointing at ``path`` in the raw document."""
        where = self.doc.location(self.doc.positions.of_value(path))
        return Diagnostic(severity, code, message, where, format_path(path), hint, self.key)

    def references(self) -> Iterator[tuple[str, str, PathT]]:
        """``(kind, name, path)`` for every reference that is a string where a name belongs."""
        for path, kind in _REFERENCES.get(self.kind, ()):
            value = self.value(path)
            if isinstance(value, str):
                yield kind, value, path
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, str):
                        yield kind, item, (*path, i)

    def value(self, path: tuple[str, ...]) -> Any:
        """The raw value at ``path`` (None when absent or not reachable through mappings)."""
        return _at(self.doc.data, path)


def raw_resource(doc: SourceDocument) -> RawResource | None:
    """The kind and name an invalid document declares, or None when it does not say."""
    data = doc.data
    if isinstance(data, dict) and isinstance(data.get("metadata"), dict):
        name, kind = data["metadata"].get("name"), data.get("kind")
        if isinstance(kind, str) and isinstance(name, str):
            return RawResource(kind, name, doc)
    return None


def _at(data: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data
