"""OAuth 2.1 for remote MCP servers: the client (the SDK's, completed), its storage, the login.

Nothing is imported here: ``status`` and ``apply`` read ``messages`` (and ``settings``) without
loading the MCP SDK that ``provider`` and ``login`` need.
"""
