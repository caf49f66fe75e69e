"""Where each resource kind sits in OpenClaw's config: the schema node its ``spec`` stands for."""

from __future__ import annotations

from clawplane.models import Agent, Channel, Gateway, McpServer, ModelProvider, Resource
from clawplane.schema.openclaw import Node, node_at

OTHER_KINDS: dict[tuple[str, ...], str] = {
    ("mcp", "servers"): "McpServer",
    ("agents", "entries"): "Agent",
    ("models", "providers"): "ModelProvider",
}
"""Gateway sections that other kinds declare, one resource per entry."""
GATEWAY_CHANNEL_KEYS = frozenset({"defaults", "modelByChannel"})
"""The keys of ``channels`` that are not a channel type: the Gateway declares them."""


def home_path(resource: Resource) -> tuple[str, ...] | None:
    """The config path a resource's ``spec`` stands for (``*`` for its own entry), or None."""
    if isinstance(resource, Gateway):
        return ()
    if isinstance(resource, McpServer):
        return ("mcp", "servers", "*")
    if isinstance(resource, Agent):
        return ("agents", "entries", "*")
    if isinstance(resource, Channel):
        return ("channels", resource.spec.type)
    if isinstance(resource, ModelProvider):
        return ("models", "providers", "*")
    return None


def home_node(resource: Resource) -> Node | None:
    """The schema node of a resource's ``spec`` (None for kinds that are not OpenClaw config)."""
    path = home_path(resource)
    return None if path is None else node_at(path)


def dotted(path: tuple[str, ...], resource: Resource) -> str:
    """A home path with the resource's own entry name in place of ``*``."""
    return ".".join(resource.name if part == "*" else part for part in path)
