"""Diagnostic codes of the skills engine and a helper that builds them.

Reason words match OpenClaw's (``symlink-escape``, ``path-escape``,
``bundled-symlink-escape``, ``bundled-root-escape``, ``description is required``)
so that a user moving from OpenClaw recognises every skip.
"""

from __future__ import annotations

from clawplane.diagnostics import Diagnostic, Location, Severity

__all__ = [
    "BUNDLED_ROOT_ESCAPE",
    "BUNDLED_SYMLINK_ESCAPE",
    "COLLISION",
    "DISCOVERY_LIMIT",
    "FILE_TOO_LARGE",
    "HARDLINKED",
    "INLINE_SKILL",
    "INVALID_FRONTMATTER",
    "MISSING_DESCRIPTION",
    "MISSING_NAME",
    "NOT_A_FILE",
    "PATH_ESCAPE",
    "SECRET_UNRESOLVED",
    "SYMLINK_ESCAPE",
    "UNREADABLE",
    "UNRESOLVED_PATH",
    "skill_diagnostic",
]

SYMLINK_ESCAPE = "skills.symlink-escape"
PATH_ESCAPE = "skills.path-escape"
BUNDLED_SYMLINK_ESCAPE = "skills.bundled-symlink-escape"
BUNDLED_ROOT_ESCAPE = "skills.bundled-root-escape"
INVALID_FRONTMATTER = "skills.invalid-frontmatter"
MISSING_DESCRIPTION = "skills.missing-description"
MISSING_NAME = "skills.missing-name"
FILE_TOO_LARGE = "skills.file-too-large"
HARDLINKED = "skills.hardlinked"
NOT_A_FILE = "skills.not-a-file"
UNREADABLE = "skills.unreadable"
UNRESOLVED_PATH = "skills.unresolved-path"
COLLISION = "skills.collision"
DISCOVERY_LIMIT = "skills.discovery-limit"
INLINE_SKILL = "skills.inline-skill"
SECRET_UNRESOLVED = "skills.secret-unresolved"


def skill_diagnostic(
    code: str,
    message: str,
    file: str | None,
    *,
    severity: Severity = Severity.WARNING,
    hint: str = "",
    resource: str = "",
) -> Diagnostic:
    """A skills diagnostic located at ``file`` (usually the SKILL.md)."""
    return Diagnostic(severity, code, message, Location(file) if file else None, hint=hint, resource=resource)
