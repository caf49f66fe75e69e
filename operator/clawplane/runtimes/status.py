"""What the supervisor reports: a runtime's status, its events, and tool call results.

These are plain values (no SDK types), so the reconcile engine and the CLI can use them
without importing the MCP SDK. Error texts in them are already redacted.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["EventKind", "Phase", "RuntimeEvent", "RuntimeStatus", "ToolResult"]


class Phase(enum.StrEnum):
    """Where a runtime is in its life."""

    STARTING = "starting"
    """Spawning or connecting, then listing tools."""
    READY = "ready"
    """Connected with a tool catalog (it may still be paused, see ``paused_until``)."""
    BACKOFF = "backoff"
    """The last attempt failed or the process crashed; waiting to restart."""
    FAILED = "failed"
    """Gave up (``max_restarts`` reached); only a new ``ensure`` starts it again."""
    STOPPING = "stopping"
    """Tearing down."""
    STOPPED = "stopped"
    """Torn down; no process or connection is left."""


class EventKind(enum.StrEnum):
    """What happened to a runtime."""

    STARTING = "starting"
    READY = "ready"
    START_FAILED = "start-failed"
    CRASHED = "crashed"
    RESTART_SCHEDULED = "restart-scheduled"
    GAVE_UP = "gave-up"
    TOOLS_CHANGED = "tools-changed"
    PAUSED = "paused"
    RECYCLED = "recycled"
    WARNING = "warning"
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class RuntimeEvent:
    """One thing that happened to a runtime (for logs, metrics and requeues)."""

    server: str
    kind: EventKind
    message: str = ""
    delay: float | None = None
    """For ``restart-scheduled``: seconds until the restart."""


@dataclass(frozen=True, slots=True)
class RuntimeStatus:
    """A snapshot of one runtime."""

    name: str
    safe_name: str
    transport: str
    config_hash: str
    phase: Phase
    launch: str = ""
    pid: int | None = None
    restarts: int = 0
    last_error: str | None = None
    paused_until: datetime | None = None
    consecutive_failures: int = 0
    server_name: str | None = None
    server_version: str | None = None
    protocol_version: str | None = None
    tool_count: int = 0
    filtered_tool_count: int = 0
    hosted: bool = False
    warnings: tuple[str, ...] = ()
    exit_code: int | None = None
    """Exit code of the last stdio process (negative: the signal that killed it)."""
    stderr_lines: int = 0
    """stderr lines the server has written so far (see ``Supervisor.stderr`` for the last ones)."""
    stdout_noise: int = 0
    """Lines on stdout that were not protocol messages (dropped, logged at DEBUG)."""
    sessions: int = 0
    """Client sessions the hosted endpoint holds for this server."""
    session_pids: tuple[int, ...] = ()
    """Processes started for those sessions (``perClient``), besides the primary ``pid``."""
    session_evictions: int = 0
    """Idle client sessions the hosted endpoint ended to make room for new ones (at ``maxSessions``)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (camelCase keys, as in resource status)."""
        return {
            "name": self.name,
            "safeName": self.safe_name,
            "transport": self.transport,
            "configHash": self.config_hash,
            "phase": self.phase.value,
            "launch": self.launch,
            "pid": self.pid,
            "restarts": self.restarts,
            "lastError": self.last_error,
            "pausedUntil": self.paused_until.isoformat() if self.paused_until else None,
            "consecutiveFailures": self.consecutive_failures,
            "serverName": self.server_name,
            "serverVersion": self.server_version,
            "protocolVersion": self.protocol_version,
            "toolCount": self.tool_count,
            "sessions": self.sessions,
            "sessionPids": list(self.session_pids),
            "sessionEvictions": self.session_evictions,
            "filteredToolCount": self.filtered_tool_count,
            "hosted": self.hosted,
            "warnings": list(self.warnings),
            "exitCode": self.exit_code,
            "stderrLines": self.stderr_lines,
            "stdoutNoise": self.stdout_noise,
        }


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result of a tool call, in MCP wire shape (content blocks as JSON objects)."""

    content: list[Mapping[str, Any]] = field(default_factory=list)
    structured_content: Mapping[str, Any] | None = None
    is_error: bool = False

    @property
    def text(self) -> str:
        """The text blocks joined by newlines."""
        return "\n".join(str(block.get("text", "")) for block in self.content if block.get("type") == "text")

    def to_dict(self) -> dict[str, Any]:
        """The MCP ``CallToolResult`` JSON."""
        doc: dict[str, Any] = {"content": [dict(b) for b in self.content], "isError": self.is_error}
        if self.structured_content is not None:
            doc["structuredContent"] = dict(self.structured_content)
        return doc
