"""One line that describes a resource, for listings (``clawplane get``, the MCP ``resources_list``)."""

from __future__ import annotations

from clawplane.models import Agent, Channel, Gateway, McpServer, Resource, Skill
from clawplane.naming import redact_url_userinfo

__all__ = ["summarize"]


def summarize(res: Resource) -> str:
    """A one-line description of a resource that never shows a secret."""
    if isinstance(res, McpServer):
        spec = res.spec
        transport = spec.effective_transport.value if spec.effective_transport else "?"
        target = " ".join([spec.command or "", *spec.args]).strip() if transport == "stdio" else ""
        if spec.url:
            target = redact_url_userinfo(spec.url)[0]
        state = "" if spec.enabled else " (disabled)"
        return f"{transport} {target}{state}".strip()
    if isinstance(res, Agent):
        skills = (
            "inherits skills"
            if res.spec.skills is None
            else f"skills: {', '.join(res.spec.skills) or 'none'}"
        )
        servers = (
            "all servers" if res.spec.mcp_servers is None else f"servers: {', '.join(res.spec.mcp_servers)}"
        )
        return f"{skills}; {servers}"
    if isinstance(res, Channel):
        agent = f" -> {res.spec.agent}" if res.spec.agent else ""
        return f"{res.spec.type} dm={res.spec.dm_policy.value} groups={res.spec.group_policy.value}{agent}"
    if isinstance(res, Skill):
        return res.spec.description
    if isinstance(res, Gateway):
        defaults = res.spec.agents.defaults.skills
        return "default skills: " + ("unrestricted" if defaults is None else ", ".join(defaults) or "none")
    return ""
