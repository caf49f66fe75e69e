"""What the engine needs from whoever runs MCP servers (local supervisor or Kubernetes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from clawplane.models import McpServerSpec
from clawplane.secrets import ResolvedSecrets


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """One discovered tool: raw and sanitized names, input-schema hash, short description."""

    raw_name: str
    safe_name: str
    schema_hash: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class RuntimeReport:
    """A runtime's state as the backend sees it (every text already redacted)."""

    phase: str  # starting | ready | paused | backoff | crashed | stopped | failed
    pid: int | None = None
    pgid: int | None = None
    restarts: int = 0
    last_error: str | None = None
    paused_until: str | None = None
    protocol_version: str | None = None
    server_info: dict[str, Any] | None = None
    endpoint: str | None = None
    tools: tuple[ToolInfo, ...] = field(default_factory=tuple)
    filtered_tools: int = 0
    session_evictions: int = 0
    """Idle client sessions its hosted endpoint ended to make room for new ones."""
    stderr: tuple[str, ...] = ()
    """The server's last stderr lines (redacted), oldest first; at most ``STDERR_TAIL_LINES``."""


STDERR_TAIL_LINES = 20
"""stderr lines a report, a status and a failed apply show for one server."""


class RuntimeBackend(Protocol):
    """Starts, probes and stops MCP server runtimes for the engine."""

    async def ensure(
        self,
        name: str,
        spec: McpServerSpec,
        *,
        safe_name: str,
        config_hash: str,
        base_dir: Path,
        resolved: ResolvedSecrets | None = None,
    ) -> RuntimeReport:
        """Run ``name`` with ``spec`` (restart when the hash changed) and report once it is up or failed.

        ``resolved`` are the spec's secret values the hash was computed from (local driver).
        """
        ...

    async def probe(
        self,
        name: str,
        spec: McpServerSpec,
        *,
        safe_name: str,
        base_dir: Path,
        resolved: ResolvedSecrets | None = None,
    ) -> RuntimeReport:
        """Start or connect, initialize, list tools, stop; report what was found."""
        ...

    async def remove(self, name: str) -> None:
        """Stop ``name`` and forget it."""
        ...

    def report(self, name: str) -> RuntimeReport | None:
        """The current state of a running runtime, or None."""
        ...
