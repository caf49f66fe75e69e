"""clawplane.reconcile.agents: each agent's MCP tool catalog and its aggregated endpoint.

``catalog`` builds an agent's tools exactly as OpenClaw would; ``endpoint`` serves them on the
folder supervisor's ``/mcp/agents/<agent>``.
"""
