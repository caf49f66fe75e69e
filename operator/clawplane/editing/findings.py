"""What ``clawplane doctor`` finds, and the documents it looks at.

A ``Finding`` says where a problem is and, when it can be fixed mechanically, carries the text
splices that fix it; a ``DoctorReport`` gathers them with the files ``--fix`` rewrote. Resource
files are loaded as round-trip YAML (``Doc``), so documents that do not validate yet can still be
looked at; a file that cannot be read, is not UTF-8, or is not YAML becomes a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.error import YAMLError

from clawplane.editing.fixes import BOM, Splice, Text, load_documents
from clawplane.loading import YamlProblem, parse_documents

__all__ = ["Doc", "DoctorReport", "Finding", "is_map", "is_seq", "load_resources"]


@dataclass
class Finding:
    """One problem; ``fix`` describes the mechanical fix when there is one."""

    file: str
    line: int
    column: int
    severity: str  # error | warning | info
    code: str
    message: str
    resource: str = ""
    path: str = ""
    fix: str | None = None
    fixed: bool = False
    splices: list[Splice] = field(default_factory=list, repr=False)
    hint: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (without the splices)."""
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "resource": self.resource,
            "path": self.path,
            "fix": self.fix,
            "fixed": self.fixed,
            "hint": self.hint,
        }


@dataclass
class DoctorReport:
    """All findings, and the files ``--fix`` rewrote."""

    findings: list[Finding] = field(default_factory=list)
    written: list[str] = field(default_factory=list)

    @property
    def remaining(self) -> list[Finding]:
        """Findings not fixed."""
        return [f for f in self.findings if not f.fixed]

    @property
    def has_errors(self) -> bool:
        """True when an error finding was not fixed."""
        return any(f.severity == "error" for f in self.remaining)


@dataclass
class Doc:
    """One resource document as round-trip YAML, with the text its positions point into."""

    file: Path
    text: Text
    data: Any
    kind: str
    name: str

    @property
    def key(self) -> str:
        """``Kind/name``."""
        return f"{self.kind}/{self.name}"

    def spec(self) -> Any:
        """The ``spec`` mapping, or None when it is not one."""
        spec = self.data.get("spec")
        return spec if is_map(spec) else None


def is_map(value: Any) -> bool:
    """A round-trip YAML mapping (it carries positions)."""
    return hasattr(value, "lc") and isinstance(value, dict)


def is_seq(value: Any) -> bool:
    """A round-trip YAML sequence (it carries positions)."""
    return hasattr(value, "lc") and isinstance(value, list)


def _bom_finding(path: Path) -> Finding:
    """A leading UTF-8 byte order mark; the fix drops exactly those three bytes."""
    return Finding(
        str(path), 1, 1, "warning", "doctor.bom", "file starts with a UTF-8 byte order mark",
        fix="remove the byte order mark", splices=[Splice(0, len(BOM), "")],
    )  # fmt: skip


def _yaml_finding(path: Path, raw: str) -> Finding:
    """The loader's own account of a YAML problem (position, code, hint), not ruamel's text."""
    try:
        parse_documents(raw)
    except YamlProblem as problem:
        return Finding(str(path), max(problem.line, 1), max(problem.column, 1), "error", problem.code,
                       problem.message, hint=problem.hint)  # fmt: skip
    return Finding(str(path), 1, 1, "error", "yaml.syntax", "invalid YAML", hint="run `clawplane validate`")


def load_resources(path: Path, report: DoctorReport) -> tuple[str, list[Doc]] | None:
    """The text of ``path`` and its resource documents; None, with a finding, when it cannot be read."""
    try:
        raw = path.read_bytes().decode("utf-8")
    except OSError as exc:
        message = f"cannot read: {exc.strerror}"
        report.findings.append(Finding(str(path), 1, 1, "error", "file.unreadable", message))
        return None
    except UnicodeDecodeError as exc:
        message = f"not UTF-8 text (byte {exc.start}); save the file as UTF-8"
        report.findings.append(Finding(str(path), 1, 1, "error", "file.encoding", message))
        return None
    try:
        data = load_documents(raw)
    except YAMLError:
        report.findings.append(_yaml_finding(path, raw))
        return None
    text = Text(raw)
    if raw.startswith(BOM):
        report.findings.append(_bom_finding(path))
    docs = []
    for item in data:
        if not is_map(item) or not isinstance(item.get("kind"), str):
            continue
        meta = item.get("metadata")
        name = meta.get("name") if is_map(meta) else None
        if isinstance(name, str):
            docs.append(Doc(path, text, item, item["kind"], name))
    return raw, docs
