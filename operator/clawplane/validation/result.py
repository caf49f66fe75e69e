"""What validation hands to later stages: typed resources that remember where they came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clawplane.diagnostics import Diagnostic, Diagnostics, Location, Severity
from clawplane.loading import PathT, SourceDocument, format_path
from clawplane.models import Resource


@dataclass(frozen=True, slots=True)
class LoadedResource:
    """A validated resource plus the document it was read from."""

    resource: Resource
    source: SourceDocument

    @property
    def key(self) -> str:
        """``Kind/name``."""
        return self.resource.key

    @property
    def raw(self) -> Any:
        """The document's data as written (before defaults)."""
        return self.source.data

    def at(self, path: PathT, *, key: bool = False) -> Location:
        """Location of the value (or with ``key=True`` the key) at ``path``."""
        pos = self.source.positions
        return self.source.location(pos.of_key(path) if key else pos.of_value(path))

    def diagnostic(
        self, severity: Severity, code: str, message: str, path: PathT, *, hint: str = "", key: bool = False
    ) -> Diagnostic:
        """A diagnostic pointing at ``path`` inside this resource."""
        return Diagnostic(severity, code, message, self.at(path, key=key), format_path(path), hint, self.key)


@dataclass(slots=True)
class ValidationResult:
    """Resources that passed structural validation, and every diagnostic found."""

    resources: list[LoadedResource] = field(default_factory=list)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    files: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not self.diagnostics.has_errors

    def of_kind(self, kind: str) -> list[LoadedResource]:
        """The resources of one kind, in load order."""
        return [r for r in self.resources if r.resource.kind == kind]
