"""Aggregated MCP endpoints: one agent's hosted servers behind one MCP server (``/mcp/agents/<agent>``).

- ``backend`` — one hand-shaken upstream session of one hosted server, requests as raw JSON-RPC;
- ``server`` — the SDK server that merges an agent's catalog, resources and prompts over them.
"""

from clawplane.runtimes.aggregate.backend import Backend, BackendError
from clawplane.runtimes.aggregate.server import AGENT_SCOPE_KEY, AgentEndpoint, Catalogs

__all__ = ["AGENT_SCOPE_KEY", "AgentEndpoint", "Backend", "BackendError", "Catalogs"]
