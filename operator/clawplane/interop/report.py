"""What ``clawplane import`` found: every change, carry-over and loss, with its path and file:line.

A loss (``import.unmapped``) is a warning: the import keeps everything else, and only an
import that produced nothing fails. What has no typed home (a key this OpenClaw does not
know, a ``${VAR}`` string clawplane would escape) is carried verbatim as raw OpenClaw config,
the Gateway's ``spec.config``; unknown keys are also listed for ``spec.configUnchecked``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clawplane.diagnostics import Diagnostic, Location, Severity
from clawplane.interop.positions import ConfigPath, locate

__all__ = ["LOST", "ConfigPath", "ImportReport", "dotted"]

LOST = "import.unmapped"


def dotted(path: ConfigPath) -> str:
    """``("mcp", "servers", "a", 0)`` → ``mcp.servers.a[0]``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


@dataclass
class ImportReport:
    """Diagnostics of one import, plus the raw OpenClaw config carried in the Gateway's ``spec.config``."""

    source: str
    positions: Mapping[ConfigPath, tuple[int, int]] = field(default_factory=dict)
    """Where each key path is written in the source (see ``clawplane.interop.positions``)."""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)
    """Raw OpenClaw config by its path in the rendered openclaw.json (the Gateway's ``spec.config``)."""
    unchecked: list[str] = field(default_factory=list)
    """Dotted paths of ``raw`` that this OpenClaw's schema does not know (``spec.configUnchecked``)."""

    def _add(self, severity: Severity, code: str, path: ConfigPath, message: str, hint: str = "") -> None:
        line, column = locate(self.positions, path)
        self.diagnostics.append(
            Diagnostic(severity, code, message, Location(self.source, line, column), dotted(path), hint)
        )

    def unmapped(self, path: ConfigPath, why: str, hint: str = "") -> None:
        """Something that could not be carried over: left out of the resources, and said so."""
        self._add(Severity.WARNING, LOST, path, f"not imported: {why}", hint)

    def changed(self, path: ConfigPath, message: str) -> None:
        """A legacy spelling rewritten to its canonical form (as ``openclaw doctor --fix`` does)."""
        self._add(Severity.INFO, "import.canonicalized", path, message)

    def warn(self, code: str, path: ConfigPath, message: str, hint: str = "") -> None:
        """Imported, but the user should look at it."""
        self._add(Severity.WARNING, code, path, message, hint)

    def info(self, code: str, path: ConfigPath, message: str) -> None:
        """Imported with a note."""
        self._add(Severity.INFO, code, path, message)

    def keep_raw(self, path: ConfigPath, value: Any, *, at: ConfigPath | None = None, note: str = "") -> None:
        """Carry ``value`` as raw OpenClaw config at ``path`` (Gateway ``spec.config``).

        ``at``: where the value is written in the source, when that differs (a renamed server);
        ``note``: an info message to report there (none when empty: the caller said why).
        """
        node = self.raw
        for part in path[:-1]:
            child = node.setdefault(str(part), {})
            if not isinstance(child, dict):
                return  # a parent already carried whole holds this value too
            node = child
        node[str(path[-1])] = value
        if note:
            self._add(Severity.INFO, "import.raw-config", at if at is not None else path, note)

    def uncheck(self, path: ConfigPath) -> None:
        """List ``path`` (already carried raw) in the Gateway's ``spec.configUnchecked``."""
        dotted_path = ".".join(str(p) for p in path)
        if dotted_path not in self.unchecked:
            self.unchecked.append(dotted_path)

    @property
    def has_unmapped(self) -> bool:
        """True when anything could not be imported."""
        return any(d.code == LOST for d in self.diagnostics)
