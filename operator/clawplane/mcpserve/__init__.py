"""clawplane as an MCP server: the control plane's tools, resources, events and approvals over MCP.

- ``clawplane mcp serve PATH`` (``stdio``, run by ``cli/serve.py``) serves one folder over stdio;
- the folder supervisor serves the same server at ``/mcp/_clawplane`` (``endpoint``), passed
  to it by ``clawplane run`` (``cli/run.py``) as one of its services;
- ``server`` is the SDK low-level ``Server`` (both protocol eras) over ``reconcile.queries``,
  ``tools`` the tool table with schemas and scopes.
"""
