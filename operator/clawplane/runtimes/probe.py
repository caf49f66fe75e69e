"""Probing: start declared servers once, list their tools, tear them down, report.

This is ``clawplane mcp probe`` (modelled on ``openclaw mcp probe --json``) and how
``hosting: consumer`` servers are checked. As in OpenClaw, a server without an explicit
``connectionTimeoutMs`` gets 5 s to initialize, safe server names are assigned over the
probed set in declaration order, and ``to_dict`` has OpenClaw's shape: ``generatedAt``,
``servers`` (sorted by name), ``tools`` (safe names, sorted by UTF-16 code units) and
``diagnostics``. Nothing is restarted: a server that fails is reported, not retried.

With a ``ProbeCall`` the probe also calls one tool of one server once it is ready (through
the supervisor, as an agent's call goes) and reports the result, or why there is none, as
``call``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio

from clawplane.jscompat import utf16_sort_key
from clawplane.models import McpServerSpec
from clawplane.naming import assign_server_names
from clawplane.runtimes.catalog import ServerTools, ToolEntry, ToolKind
from clawplane.runtimes.errors import McpRuntimeError
from clawplane.runtimes.settings import RuntimeSettings
from clawplane.runtimes.status import Phase, RuntimeStatus, ToolResult
from clawplane.runtimes.supervisor import Supervisor

__all__ = [
    "ProbeCall",
    "ProbeCallOutcome",
    "ProbeDiagnostic",
    "ProbeReport",
    "ProbeServer",
    "ProbeTarget",
    "probe_servers",
]

PROBE_CONNECT_TIMEOUT_MS = 5000
PROBE_STDERR_LINES = 20
APPROVAL_HINT = "tools have no safety annotations; calls require approval in prompting session postures"
_HINT_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


@dataclass(frozen=True, slots=True)
class ProbeTarget:
    """One declared server to probe; ``base_dir`` is its resource file's folder."""

    name: str
    spec: McpServerSpec
    base_dir: Path


@dataclass(frozen=True, slots=True)
class ProbeCall:
    """A tool to call on one probed server (``tool`` is its raw MCP name)."""

    server: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ProbeCallOutcome:
    """What calling the tool gave: a result (possibly ``isError``), or why there is none."""

    server: str
    tool: str
    result: ToolResult | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """The call returned a result that is not an error."""
        return self.result is not None and not self.result.is_error

    def to_dict(self) -> dict[str, Any]:
        """``{server, tool, result | error}``, the result as MCP ``CallToolResult`` JSON."""
        doc: dict[str, Any] = {"server": self.server, "tool": self.tool}
        if self.result is not None:
            doc["result"] = self.result.to_dict()
        if self.error is not None:
            doc["error"] = self.error
        return doc


@dataclass(frozen=True, slots=True)
class ProbeServer:
    """What a probed server offered."""

    name: str
    launch: str
    tools: int
    filtered_tools: int
    codex_approval_mode: str
    approval_hint: str | None
    request_timeout_ms: int
    supports_parallel_tool_calls: bool
    resources: bool
    prompts: bool
    protocol_version: str | None
    list_changed: frozenset[str] = frozenset()
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """OpenClaw's per-server probe entry (optional keys only when set)."""
        doc: dict[str, Any] = {
            "launch": self.launch,
            "tools": self.tools,
            "codexApprovalMode": self.codex_approval_mode,
        }
        if self.approval_hint:
            doc["approvalHint"] = self.approval_hint
        doc["requestTimeoutMs"] = self.request_timeout_ms
        if self.supports_parallel_tool_calls:
            doc["supportsParallelToolCalls"] = True
        if self.filtered_tools:
            doc["filteredTools"] = self.filtered_tools
        if self.resources:
            doc["resources"] = True
        if self.prompts:
            doc["prompts"] = True
        if self.list_changed:
            doc["listChanged"] = {
                kind: kind in self.list_changed for kind in ("tools", "resources", "prompts")
            }
        return doc


@dataclass(frozen=True, slots=True)
class ProbeDiagnostic:
    """A server that could not be probed, and why."""

    server_name: str
    safe_server_name: str
    launch_summary: str
    message: str
    stderr: tuple[str, ...] = ()
    """The server's last stderr lines (redacted): usually the reason it failed."""

    def to_dict(self) -> dict[str, Any]:
        """OpenClaw's diagnostic entry, plus ``stderr`` when the server wrote any."""
        doc: dict[str, Any] = {
            "serverName": self.server_name,
            "safeServerName": self.safe_server_name,
            "launchSummary": self.launch_summary,
            "message": self.message,
        }
        if self.stderr:
            doc["stderr"] = list(self.stderr)
        return doc


@dataclass(frozen=True, slots=True)
class ProbeReport:
    """The outcome of one probe."""

    generated_at: datetime
    servers: Mapping[str, ProbeServer] = field(default_factory=dict)
    catalog: Sequence[ToolEntry] = ()
    diagnostics: Sequence[ProbeDiagnostic] = ()
    skipped: Sequence[str] = ()
    call: ProbeCallOutcome | None = None

    @property
    def tools(self) -> list[str]:
        """Safe tool names, sorted as JavaScript's default sort does."""
        return sorted((entry.name for entry in self.catalog), key=utf16_sort_key)

    @property
    def renamed(self) -> list[ToolEntry]:
        """Tools whose model-facing name is not ``<safeServer>__<raw name>`` (OpenClaw says so)."""
        return [e for e in self.catalog if e.kind is ToolKind.TOOL and e.name != f"{e.safe_server}__{e.tool}"]

    @property
    def ok(self) -> bool:
        """True when every probed server connected."""
        return not self.diagnostics

    def to_dict(self) -> dict[str, Any]:
        """The ``openclaw mcp probe --json`` document."""
        stamp = self.generated_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        doc: dict[str, Any] = {
            "generatedAt": stamp,
            "servers": {name: self.servers[name].to_dict() for name in sorted(self.servers)},
            "tools": self.tools,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
        if self.call is not None:
            doc["call"] = self.call.to_dict()  # not in OpenClaw's document: only with a call
        return doc


def _approval_mode(name: str, spec: McpServerSpec) -> str:
    if spec.codex and spec.codex.default_tools_approval_mode:
        return spec.codex.default_tools_approval_mode.value
    # OpenClaw trusts its own loopback gateway server by default.
    if name == "openclaw" and spec.url:
        parts = urlsplit(spec.url)
        host = parts.hostname or ""
        loopback = host == "localhost" or _is_loopback_ip(host)
        if loopback and parts.path.rstrip("/") == "/mcp":
            return "approve"
    return "auto"


def _is_loopback_ip(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _approval_hint(mode: str, tools: ServerTools) -> str | None:
    if mode != "auto" or not tools.tools:
        return None
    annotated = any(
        any(isinstance((t.annotations or {}).get(k), bool) for k in _HINT_KEYS) for t in tools.tools
    )
    return None if annotated else APPROVAL_HINT


def _probe_spec(spec: McpServerSpec) -> McpServerSpec:
    if "connection_timeout_ms" in spec.model_fields_set:
        return spec
    return spec.model_copy(update={"connection_timeout_ms": PROBE_CONNECT_TIMEOUT_MS})


def _server_entry(target: ProbeTarget, status: RuntimeStatus, tools: ServerTools) -> ProbeServer:
    mode = _approval_mode(target.name, target.spec)
    return ProbeServer(
        name=target.name,
        launch=tools.launch,
        tools=len(tools.tools),
        filtered_tools=tools.filtered,
        codex_approval_mode=mode,
        approval_hint=_approval_hint(mode, tools),
        request_timeout_ms=target.spec.request_timeout_ms,
        supports_parallel_tool_calls=target.spec.supports_parallel_tool_calls,
        resources=tools.resources,
        prompts=tools.prompts,
        protocol_version=status.protocol_version,
        list_changed=tools.list_changed,
        warnings=status.warnings,
    )


async def _call(supervisor: Supervisor, call: ProbeCall, tools: ServerTools | None) -> ProbeCallOutcome:
    """Call ``call.tool`` if the server is up and lists it."""
    if tools is None:
        return ProbeCallOutcome(call.server, call.tool, error="the server did not connect (see diagnostics)")
    names = sorted(t.name for t in tools.tools)
    if call.tool not in names:
        listed = ", ".join(names) if names else "none"
        return ProbeCallOutcome(
            call.server, call.tool, error=f"the server lists no tool named {call.tool!r} (it lists: {listed})"
        )
    try:
        result = await supervisor.call_tool(call.server, call.tool, call.arguments)
    except McpRuntimeError as exc:
        return ProbeCallOutcome(call.server, call.tool, error=str(exc))
    return ProbeCallOutcome(call.server, call.tool, result=result)


async def probe_servers(
    targets: Sequence[ProbeTarget],
    *,
    settings: RuntimeSettings | None = None,
    call: ProbeCall | None = None,
) -> ProbeReport:
    """Start every enabled target, list its tools, stop it; all targets in parallel.

    With ``call``, that tool is called once its server is ready, before anything is stopped.
    """
    enabled = [t for t in targets if t.spec.enabled]
    safe_names = dict(
        zip([t.name for t in enabled], assign_server_names([t.name for t in enabled]), strict=True)
    )
    base = settings or RuntimeSettings()
    servers: dict[str, ProbeServer] = {}
    diagnostics: list[ProbeDiagnostic] = []
    async with Supervisor(settings=replace(base, max_restarts=0)) as supervisor:
        for target in enabled:
            await supervisor.ensure(
                target.name,
                _probe_spec(target.spec),
                config_hash="probe",
                base_dir=target.base_dir,
                safe_name=safe_names[target.name],
            )
        statuses: dict[str, RuntimeStatus] = {}

        async def settle(name: str) -> None:
            statuses[name] = await supervisor.wait_settled(name)

        async with anyio.create_task_group() as tg:
            for target in enabled:
                tg.start_soon(settle, target.name)
        runtimes = {t.name: supervisor.server_tools(t.name) for t in enabled}
        for target in enabled:
            status = statuses[target.name]
            if status.phase is Phase.READY:
                servers[target.name] = _server_entry(target, status, runtimes[target.name])
            else:
                message = status.last_error or "probe did not connect to this server"
                stderr = tuple(supervisor.stderr(target.name)[-PROBE_STDERR_LINES:])
                diagnostics.append(
                    ProbeDiagnostic(target.name, status.safe_name, status.launch, message, stderr)
                )
        catalog = supervisor.catalog([t.name for t in enabled if t.name in servers])
        outcome = None
        if call is not None:
            listed = runtimes[call.server] if call.server in servers else None
            outcome = await _call(supervisor, call, listed)
    return ProbeReport(
        generated_at=datetime.now(UTC),
        servers=servers,
        catalog=catalog,
        diagnostics=diagnostics,
        skipped=[t.name for t in targets if not t.spec.enabled],
        call=outcome,
    )
