"""Typed rows of the state database and the observed state they add up to."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ResourceRecord:
    """What was last applied for one resource, and its status."""

    key: str
    kind: str
    name: str
    config_hash: str
    generation: int
    observed_generation: int
    spec: dict[str, Any]
    phase: str
    conditions: list[dict[str, Any]] = field(default_factory=list)
    status: dict[str, Any] = field(default_factory=dict)
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class RuntimeRecord:
    """A runtime the supervisor owns or last probed."""

    name: str
    config_hash: str
    hosting: str
    transport: str
    phase: str
    pid: int | None = None
    pgid: int | None = None
    restarts: int = 0
    last_error: str | None = None
    paused_until: str | None = None
    protocol_version: str | None = None
    server_info: dict[str, Any] | None = None
    endpoint: str | None = None
    started_at: str | None = None
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class ProcessRecord:
    """A process a supervisor spawned: who it is for sure, and where its tree lives."""

    pid: int
    start_ticks: int
    boot_id: str
    label: str
    pgid: int
    cgroup: str | None = None
    descendants: tuple[tuple[int, int, str], ...] = ()
    """(pid, start ticks, boot id) of descendants seen while the tree was intact."""
    supervisor_pid: int = 0


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """One tool of one server: raw and sanitized names and a hash of its input schema."""

    raw_name: str
    safe_name: str
    schema_hash: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One apply, as recorded."""

    id: int
    started_at: str
    finished_at: str | None
    user: str
    host: str
    git_commit: str | None
    plan_hash: str
    actions: list[dict[str, Any]]
    outcome: str
    detail: str


@dataclass(frozen=True, slots=True)
class ObservedState:
    """Everything clawplane knows about the real world for one folder."""

    resources: dict[str, ResourceRecord] = field(default_factory=dict)
    runtimes: dict[str, RuntimeRecord] = field(default_factory=dict)
    tools_observed: dict[str, tuple[ToolRecord, ...]] = field(default_factory=dict)
    tools_applied: dict[str, tuple[ToolRecord, ...]] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    supervisor_alive: bool = False
    tokens: dict[str, str] = field(default_factory=dict, repr=False)
    """Bearer token by consumer (rendered into configs; left out of the fingerprint and repr)."""

    def fingerprint(self) -> str:
        """A hash that changes whenever anything a plan depends on changes."""
        doc = {
            "resources": {k: (r.config_hash, r.phase) for k, r in sorted(self.resources.items())},
            "runtimes": {k: (r.config_hash, r.phase, r.pid) for k, r in sorted(self.runtimes.items())},
            "tools": {k: [asdict(t) for t in v] for k, v in sorted(self.tools_observed.items())},
            "applied": {k: [asdict(t) for t in v] for k, v in sorted(self.tools_applied.items())},
            "outputs": dict(sorted(self.outputs.items())),
        }
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]
