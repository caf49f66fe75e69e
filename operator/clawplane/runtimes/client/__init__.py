"""clawplane.runtimes.client: the MCP client side, one implementation for every remote use.

A session to one server in either protocol era (``connection``) over stdio, streamable HTTP or
SSE (``remote``), bounded pagination (``listing``), change notifications (``changes``), calls
(``calls``) and input answered without a person (``elicitation``). The supervisor, the per-agent
endpoints, the login flow and ``clawplane mcp probe`` all connect through it.
"""
