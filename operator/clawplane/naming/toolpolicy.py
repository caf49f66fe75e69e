"""OpenClaw's tool policy as it applies to MCP tools (``<server>__<tool>`` names).

Follows ``src/agents/tool-policy-match.ts`` and the core profiles of ``tool-catalog.ts``
(OpenClaw 2026.9.6): names are compared lower-cased, ``*`` is a glob, deny always wins,
an empty allow list allows everything not denied. ``bundle-mcp`` and ``group:plugins``
stand for every MCP tool. Profiles allow MCP tools except ``minimal`` (``coding`` and
``messaging`` list ``bundle-mcp``, ``full`` is ``*``); an explicit ``allow`` replaces the
profile, ``alsoAllow`` adds to it. The Gateway's policy and the Agent's both apply: a tool
must pass each. Core tool groups (``group:fs``, ...) name no MCP tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clawplane.naming.toolfilter import glob_matches

__all__ = ["ToolPolicyLayer", "layers_for", "mcp_tool_allowed"]

ALL_MCP = frozenset({"bundle-mcp", "group:plugins"})
_PROFILE_ALLOWS_MCP = {"minimal": False, "coding": True, "messaging": True, "full": True}


@dataclass(frozen=True, slots=True)
class ToolPolicyLayer:
    """One ``tools`` block (the Gateway's or an Agent's), as plain values."""

    profile: str | None = None
    allow: Sequence[str] | None = None
    also_allow: Sequence[str] | None = None
    deny: Sequence[str] | None = None


def _matches(entry: str, name: str) -> bool:
    pattern = entry.strip().lower()
    return pattern in ALL_MCP or glob_matches(pattern, name)


def _allowed_by(layer: ToolPolicyLayer, name: str) -> bool:
    if any(_matches(entry, name) for entry in layer.deny or ()):
        return False
    if layer.allow:
        allow: list[str] = list(layer.allow)
    elif layer.profile is not None:
        if _PROFILE_ALLOWS_MCP.get(layer.profile, True):
            return True
        allow = list(layer.also_allow or ())
        if not allow:
            return False
    else:
        return True
    return any(_matches(entry, name) for entry in allow)


def layers_for(gateway: ToolPolicyLayer | None, agent: ToolPolicyLayer | None) -> list[ToolPolicyLayer]:
    """The layers an agent's MCP tools pass: the profile (the Agent's, else the Gateway's, unless
    either gives an explicit ``allow``), then the Gateway's and the Agent's allow/deny lists."""
    g, a = gateway or ToolPolicyLayer(), agent or ToolPolicyLayer()
    layers = []
    profile = a.profile or g.profile
    if profile and not (g.allow or a.allow):
        also = [*(g.also_allow or ()), *(a.also_allow or ())]
        layers.append(ToolPolicyLayer(profile=profile, also_allow=also))
    layers.append(ToolPolicyLayer(allow=g.allow, deny=g.deny))
    layers.append(ToolPolicyLayer(allow=a.allow, deny=a.deny))
    return layers


def mcp_tool_allowed(name: str, layers: Sequence[ToolPolicyLayer]) -> bool:
    """Whether every policy layer lets the agent see MCP tool ``name``."""
    lowered = name.lower()
    return all(_allowed_by(layer, lowered) for layer in layers)
