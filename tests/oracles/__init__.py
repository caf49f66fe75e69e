"""Third-party "oracle" tools (OpenClaw, Codex CLI, MCP peers, kubectl) for compat tests.

``install.sh`` installs them; ``locate`` tells tests how to run them (or why they can't).
"""
