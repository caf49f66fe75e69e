"""Aggregated MCP endpoints: one agent's hosted servers behind one MCP server (``/mcp/agents/<agent>``).

- ``backend`` — one hand-shaken upstream session of one hosted server, requests as raw JSON-RPC;
- ``server`` — the SDK server that merges an agent's catalog, resources and prompts over them,
  one class in parts: ``sessions`` (who asks, downstream sessions), ``changes`` (list-change
  notices), ``forwarding`` (requests to backends), ``tools`` and ``natives`` (resources, prompts);
- ``asking`` — 2026-07-28 calls whose server asks the client; ``skills`` — SEP-2640 skills.
"""

from clawplane.runtimes.aggregate.backend import Backend, BackendError
from clawplane.runtimes.aggregate.server import AGENT_SCOPE_KEY, AgentEndpoint, Catalogs

__all__ = ["AGENT_SCOPE_KEY", "AgentEndpoint", "Backend", "BackendError", "Catalogs"]
