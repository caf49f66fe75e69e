"""The local runtime backend: hosted servers under one ``runtimes.Supervisor``, probes on the side.

Hosted stdio servers stay running and are exposed over streamable HTTP on the
supervisor's loopback endpoint; consumer-hosted and remote servers are probed (start
or connect, initialize, list tools, stop) with a short-lived supervisor of their own.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from clawplane.desired import DesiredState
from clawplane.models import McpServerSpec
from clawplane.reconcile.agents.endpoint import AgentRoutes
from clawplane.reconcile.backend import STDERR_TAIL_LINES, RuntimeReport, ToolInfo
from clawplane.runtimes import (
    Endpoint,
    Phase,
    Principal,
    RequestGuard,
    RuntimeEvent,
    RuntimeSettings,
    RuntimeStatus,
    Supervisor,
    TokenTable,
    ToolKind,
    schema_hash,
    token_digest,
)
from clawplane.secrets import ResolvedSecrets
from clawplane.skills import AgentSnapshot
from clawplane.state import CLI, READER, StateDB, load_tokens

SETTLE_MARGIN_S = 5.0
SCOPES = {CLI: frozenset({"read", "approve"}), READER: frozenset({"read"})}
"""Scopes of the control plane (``/mcp/_clawplane``) by consumer; the others have none."""


def _report(supervisor: Supervisor, name: str, status: RuntimeStatus, endpoint: str | None) -> RuntimeReport:
    tools: tuple[ToolInfo, ...] = ()
    if status.phase is Phase.READY:
        entries = [e for e in supervisor.catalog([name]) if e.kind is ToolKind.TOOL]
        tools = tuple(
            ToolInfo(e.tool, e.name, schema_hash(e.input_schema), (e.description or "")[:200])
            for e in entries
        )
    info: dict[str, Any] | None = None
    if status.server_name:
        info = {"name": status.server_name, "version": status.server_version}
    if status.phase is Phase.READY:
        # What the agent catalog's utility tools (resources_*, prompts_*) are made from.
        offered = supervisor.server_tools(name)
        info = {**(info or {}), "resources": offered.resources, "prompts": offered.prompts}
    return RuntimeReport(
        phase=status.phase.value,
        pid=status.pid,
        pgid=status.pid,
        restarts=status.restarts,
        last_error=status.last_error,
        paused_until=status.paused_until.isoformat().replace("+00:00", "Z") if status.paused_until else None,
        protocol_version=status.protocol_version,
        server_info=info,
        endpoint=endpoint,
        tools=tools,
        filtered_tools=status.filtered_tool_count,
        session_evictions=status.session_evictions,
        stderr=tuple(supervisor.stderr(name)[-STDERR_TAIL_LINES:]),
    )


class LocalBackend:
    """``RuntimeBackend`` over a running ``runtimes.Supervisor`` and its HTTP endpoint."""

    def __init__(
        self,
        supervisor: Supervisor,
        endpoint: Endpoint | None,
        settings: RuntimeSettings,
        tokens: TokenTable | None = None,
    ) -> None:
        self.supervisor = supervisor
        self.endpoint = endpoint
        self.settings = settings
        self.tokens = tokens or TokenTable()
        self.agents = AgentRoutes()
        """The applied agents, served at ``/mcp/agents/<agent>`` (``agentendpoint``)."""
        self.on_applied: list[Callable[[DesiredState], None]] = []
        """Told of each applied desired state once its outputs are written (the audit trail's settings)."""

    def outputs_written(
        self, db: StateDB, desired: DesiredState, snapshots: Mapping[str, AgentSnapshot] | None = None
    ) -> None:
        """An apply wrote its outputs: reload the tokens, and serve the applied agents and their skills."""
        self.refresh_access(db)
        self.agents.update(desired, snapshots)
        for follow in self.on_applied:
            follow(desired)

    def refresh_access(self, db: StateDB) -> None:
        """Load the tokens and what each reaches from the state database (after renders, rotation)."""
        self.tokens.replace(access_table(db))

    def _url(self, name: str) -> str | None:
        return self.endpoint.url(name) if self.endpoint is not None else None

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
        """Start or restart a hosted server and wait for its first attempt to settle."""
        await self.supervisor.ensure(
            name, spec, config_hash=config_hash, base_dir=base_dir, safe_name=safe_name, resolved=resolved
        )
        timeout = spec.connection_timeout_ms / 1000 + SETTLE_MARGIN_S
        try:
            status = await self.supervisor.wait_settled(name, timeout=timeout)
        except TimeoutError:
            status = self.supervisor.status(name)
        return _report(self.supervisor, name, status, self._url(name))

    async def probe(
        self,
        name: str,
        spec: McpServerSpec,
        *,
        safe_name: str,
        base_dir: Path,
        resolved: ResolvedSecrets | None = None,
    ) -> RuntimeReport:
        """Start or connect once, list tools, stop."""
        return await probe_once(
            name, spec, safe_name=safe_name, base_dir=base_dir, settings=self.settings, resolved=resolved
        )

    async def remove(self, name: str) -> None:
        """Stop a hosted server (unknown names are ignored)."""
        await self.supervisor.remove(name)

    def report(self, name: str) -> RuntimeReport | None:
        """The live state of a hosted server, or None."""
        if name not in self.supervisor.names():
            return None
        return _report(self.supervisor, name, self.supervisor.status(name), self._url(name))


async def probe_once(
    name: str,
    spec: McpServerSpec,
    *,
    safe_name: str,
    base_dir: Path,
    settings: RuntimeSettings,
    resolved: ResolvedSecrets | None = None,
) -> RuntimeReport:
    """Start or connect once, initialize, list tools, stop; nothing keeps running afterwards."""
    async with Supervisor(settings=replace(settings, max_restarts=0)) as probe:
        await probe.ensure(
            name, spec, config_hash="probe", base_dir=base_dir, safe_name=safe_name, resolved=resolved
        )
        try:
            status = await probe.wait_settled(
                name, timeout=spec.connection_timeout_ms / 1000 + SETTLE_MARGIN_S
            )
        except TimeoutError:
            status = probe.status(name)
        report = _report(probe, name, status, None)
    return replace(report, pid=None, pgid=None)


def access_table(db: StateDB) -> dict[str, Principal]:
    """Token digest → principal, from the tokens table."""
    table: dict[str, Principal] = {}
    for record in load_tokens(db).values():
        scopes = SCOPES.get(record.consumer, frozenset())
        table[token_digest(record.token)] = Principal(record.consumer, record.servers, scopes)
    return table


@asynccontextmanager
async def open_local_backend(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    settings: RuntimeSettings | None = None,
    on_event: Callable[[RuntimeEvent], None] | None = None,
    tokens: TokenTable | None = None,
    sock: socket.socket | None = None,
) -> AsyncIterator[LocalBackend]:
    """A supervisor with its HTTP endpoint running; everything is torn down on exit.

    Raises:
        PortInUseError: ``port`` is taken.
    """
    settings = settings or RuntimeSettings()
    tokens = tokens or TokenTable()
    async with Supervisor(settings=settings, on_event=on_event) as supervisor:
        endpoint = await supervisor.expose(RequestGuard(host, tokens), host=host, port=port, sock=sock)
        yield LocalBackend(supervisor, endpoint, settings, tokens)
