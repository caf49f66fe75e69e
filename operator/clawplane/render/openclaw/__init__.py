"""``openclaw.json`` as the real OpenClaw reads it, rendered from the desired state.

``config`` assembles the file from its parts: the gateway's own sections (``gateway``), agents
and their tool policy (``agents``), channels (``channels``), MCP servers (``servers``), model
providers (``models``), keys declared by name (``keys``); ``check`` holds the rendered file
against OpenClaw's config schema before it is written.
"""

from clawplane.render.openclaw.agents import AgentEntries
from clawplane.render.openclaw.check import RenderedChecks
from clawplane.render.openclaw.config import RenderedConfig, render_openclaw_config
from clawplane.render.openclaw.servers import ServerEntries

__all__ = ["AgentEntries", "RenderedChecks", "RenderedConfig", "ServerEntries", "render_openclaw_config"]
