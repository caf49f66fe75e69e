"""Diagnostics: every problem clawplane reports about a user's input.

A ``Diagnostic`` names its severity, a stable code, a message, where it happened
(file, 1-based line and column, field path) and, where one exists, a hint that says
what to do. Stages collect diagnostics instead of raising, so a user sees every
problem at once. This module also renders diagnostics as plain text, JSON and
GitHub workflow annotations; the CLI adds colour on top of the plain text.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field


class Severity(enum.StrEnum):
    """How bad a diagnostic is."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a source file; line and column are 1-based (0 = unknown)."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{max(self.column, 1)}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem, with the place it comes from and what to do about it."""

    severity: Severity
    code: str
    message: str
    location: Location | None = None
    path: str = ""
    hint: str = ""
    resource: str = ""

    @property
    def is_error(self) -> bool:
        """True when this diagnostic makes the input invalid."""
        return self.severity is Severity.ERROR

    def __str__(self) -> str:
        """The plain-text form people read (``format_text``), never the dataclass repr."""
        return format_text(self)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping with stable keys."""
        loc = self.location
        return {
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
            "file": loc.file if loc else None,
            "line": loc.line if loc and loc.line else None,
            "column": loc.column if loc and loc.line else None,
            "path": self.path or None,
            "resource": self.resource or None,
            "hint": self.hint or None,
        }

    def sort_key(self) -> tuple[str, int, int, str]:
        """Order by file, position, then code."""
        loc = self.location or Location("")
        return (loc.file, loc.line, loc.column, self.code)


@dataclass
class Diagnostics:
    """An ordered, append-only collection of diagnostics."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        """Record one diagnostic."""
        self.items.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        """Record several diagnostics."""
        self.items.extend(diagnostics)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def errors(self) -> list[Diagnostic]:
        """The diagnostics that make the input invalid."""
        return [d for d in self.items if d.is_error]

    @property
    def warnings(self) -> list[Diagnostic]:
        """The warnings."""
        return [d for d in self.items if d.severity is Severity.WARNING]

    @property
    def has_errors(self) -> bool:
        """True if any diagnostic is an error."""
        return any(d.is_error for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        """Diagnostics ordered by file and position (stable for equal keys)."""
        return sorted(self.items, key=Diagnostic.sort_key)


def format_text(diagnostic: Diagnostic) -> str:
    """One diagnostic as plain text: ``file:line:col: severity[code]: message`` plus hint."""
    where = f"{diagnostic.location}: " if diagnostic.location else ""
    field_part = f" (at {diagnostic.path})" if diagnostic.path else ""
    text = f"{where}{diagnostic.severity.value}[{diagnostic.code}]: {diagnostic.message}{field_part}"
    if diagnostic.hint:
        text += f"\n  hint: {diagnostic.hint}"
    return text


def summary_line(diagnostics: Diagnostics, *, files: int, resources: int) -> str:
    """A closing line such as ``3 resources in 2 files: 1 error, 0 warnings``."""
    errors, warnings = len(diagnostics.errors), len(diagnostics.warnings)
    return (
        f"{resources} resource{'s' if resources != 1 else ''} in {files} "
        f"file{'s' if files != 1 else ''}: {errors} error{'s' if errors != 1 else ''}, "
        f"{warnings} warning{'s' if warnings != 1 else ''}"
    )


def format_json(diagnostics: Diagnostics, *, files: int, resources: int) -> str:
    """All diagnostics as one JSON document."""
    doc = {
        "valid": not diagnostics.has_errors,
        "files": files,
        "resources": resources,
        "errors": len(diagnostics.errors),
        "warnings": len(diagnostics.warnings),
        "diagnostics": [d.to_dict() for d in diagnostics.sorted()],
    }
    return json.dumps(doc, indent=2)


def _gh_escape(value: str, *, prop: bool) -> str:
    # GitHub's workflow-command escaping; properties also escape ':' and ','.
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def format_github(diagnostic: Diagnostic) -> str:
    """One diagnostic as a GitHub Actions workflow annotation."""
    level = {"error": "error", "warning": "warning", "info": "notice"}[diagnostic.severity.value]
    props = []
    loc = diagnostic.location
    if loc:
        props.append(f"file={_gh_escape(loc.file, prop=True)}")
        if loc.line:
            props.append(f"line={loc.line}")
            props.append(f"col={max(loc.column, 1)}")
    props.append(f"title={_gh_escape('clawplane ' + diagnostic.code, prop=True)}")
    message = diagnostic.message
    if diagnostic.path:
        message += f" (at {diagnostic.path})"
    if diagnostic.hint:
        message += f"\nhint: {diagnostic.hint}"
    return f"::{level} {','.join(props)}::{_gh_escape(message, prop=False)}"
