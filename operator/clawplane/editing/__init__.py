"""Editing resource files in place, keeping every comment and position.

- ``doctor`` — ``clawplane doctor``: legacy keys, stale references and risky settings, with
  safe fixes; ``findings`` holds what it reports and the documents it reads.
- ``mcpedit`` — ``clawplane mcp set`` and ``unset``: one McpServer written or removed.
- ``fixes`` — round-trip YAML and text splices at recorded positions, shared by both.

The names resolve on first use: the round-trip YAML machinery is loaded only by the commands
that edit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawplane._utils.lazy import LazyNames

if TYPE_CHECKING:
    from clawplane.editing.doctor import doctor_paths
    from clawplane.editing.findings import DoctorReport, Finding
    from clawplane.editing.mcpedit import (
        canonicalize,
        find_servers,
        has_documents,
        redact,
        remove_server_text,
        set_server_text,
        to_plain,
    )

_HOMES = {
    "DoctorReport": "clawplane.editing.findings",
    "Finding": "clawplane.editing.findings",
    "canonicalize": "clawplane.editing.mcpedit",
    "doctor_paths": "clawplane.editing.doctor",
    "find_servers": "clawplane.editing.mcpedit",
    "has_documents": "clawplane.editing.mcpedit",
    "redact": "clawplane.editing.mcpedit",
    "remove_server_text": "clawplane.editing.mcpedit",
    "set_server_text": "clawplane.editing.mcpedit",
    "to_plain": "clawplane.editing.mcpedit",
}

__all__ = [
    "DoctorReport",
    "Finding",
    "canonicalize",
    "doctor_paths",
    "find_servers",
    "has_documents",
    "redact",
    "remove_server_text",
    "set_server_text",
    "to_plain",
]

_names = LazyNames(__name__, _HOMES, globals())
__getattr__ = _names.getattr
__dir__ = _names.dir
