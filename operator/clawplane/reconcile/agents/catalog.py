"""An agent's MCP tool catalog exactly as OpenClaw builds it, from recorded or live tool surfaces.

The catalog is the merge of the agent's servers (``Agent.mcpServers``, each with its
``toolFilter`` applied when it was listed): ``<server>__<tool>`` names with OpenClaw's
collision suffixes, plus each server's ``resources_*``/``prompts_*`` utility tools, then
filtered by the Gateway's and the Agent's tool policy (``naming.toolpolicy``). ``tools.json``
is made from the surfaces recorded at the last apply; the per-agent endpoint from the live
ones, so both list the same names while nothing drifted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clawplane.desired import DesiredState
from clawplane.models import Agent, Gateway, McpServer, ToolPolicy
from clawplane.naming import ToolPolicyLayer, layers_for, mcp_tool_allowed
from clawplane.runtimes import ServerTools, ToolEntry, ToolKind, ToolSpec, schema_hash
from clawplane.state import ObservedState

__all__ = [
    "AgentRoute",
    "agent_layers",
    "agent_routes",
    "catalog_rows",
    "filter_catalog",
    "recorded_surfaces",
]


def _layer(policy: ToolPolicy | None) -> ToolPolicyLayer | None:
    if policy is None:
        return None
    return ToolPolicyLayer(
        profile=policy.profile.value if policy.profile else None,
        allow=policy.allow,
        also_allow=policy.also_allow,
        deny=policy.deny,
    )


def agent_layers(gateway: Gateway | None, agent: Agent | None) -> list[ToolPolicyLayer]:
    """The tool policy layers an agent's MCP tools pass (Gateway's, then Agent's)."""
    return layers_for(
        _layer(gateway.spec.tools if gateway is not None else None),
        _layer(agent.spec.tools if agent is not None else None),
    )


def filter_catalog(entries: Sequence[ToolEntry], layers: Sequence[ToolPolicyLayer]) -> list[ToolEntry]:
    """The entries the agent's tool policy lets it see."""
    return [e for e in entries if mcp_tool_allowed(e.name, layers)]


@dataclass(frozen=True, slots=True)
class AgentRoute:
    """What the per-agent endpoint needs of an applied agent: its servers and its tool policy."""

    servers: tuple[str, ...]
    layers: tuple[ToolPolicyLayer, ...]


def agent_routes(desired: DesiredState) -> dict[str, AgentRoute]:
    """Every agent of ``desired`` by id (lower-case name), as the per-agent endpoint serves it."""
    models = {a.name.lower(): a for a in desired.agent_models}
    return {
        name.lower(): AgentRoute(
            tuple(view.servers), tuple(agent_layers(desired.gateway, models.get(name.lower())))
        )
        for name, view in desired.agents.items()
    }


def recorded_surfaces(
    servers: Sequence[str], desired: DesiredState, observed: ObservedState
) -> list[ServerTools]:
    """The tool surfaces recorded at the last apply, for the servers that have one."""
    out = []
    for name in servers:
        tools = observed.tools_applied.get(name)
        if tools is None:
            continue
        item = desired.resources.get(f"McpServer/{name}")
        resource = item.resource if item is not None else None
        spec = resource.spec if isinstance(resource, McpServer) else None
        runtime = observed.runtimes.get(name)
        info = (runtime.server_info or {}) if runtime is not None else {}
        out.append(
            ServerTools(
                server=name,
                safe_server=item.safe_name if item is not None else name,
                launch="",
                tools=tuple(
                    ToolSpec(name=t.raw_name, title=None, description=t.description or None, input_schema={})
                    for t in tools
                ),
                listed=len(tools),
                resources=bool(info.get("resources")),
                prompts=bool(info.get("prompts")),
                tool_filter=spec.tool_filter if spec is not None else None,
            )
        )
    return out


def catalog_rows(entries: Sequence[ToolEntry], observed: ObservedState) -> list[dict[str, Any]]:
    """``tools.json`` rows: name, server, raw tool, kind, description and input schema hash."""
    hashes = {(s, t.raw_name): t.schema_hash for s, tools in observed.tools_applied.items() for t in tools}
    rows = []
    for entry in entries:
        tool = entry.kind is ToolKind.TOOL
        rows.append(
            {
                "name": entry.name,
                "server": entry.server,
                "tool": entry.tool,
                "kind": entry.kind.value,
                "description": entry.description,
                "inputSchemaHash": hashes.get((entry.server, entry.tool), "")
                if tool
                else schema_hash(entry.input_schema),
            }
        )
    return sorted(rows, key=lambda r: r["name"])
