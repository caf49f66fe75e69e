"""How a session that waits on an OAuth login ends, and how status reads that (no SDK imported).

The supervisor never asks anyone to log in: without a stored login an ``auth: oauth`` server's
session ends with a message that starts with ``LOGIN_REQUIRED`` and names the command to run.
An ``identity: per-requester`` server without an operator login ends with ``TOOLS_UNKNOWN``,
which is not a failure: each sender logs in through OpenClaw.
"""

from __future__ import annotations

import shlex
from pathlib import Path

__all__ = ["LOGIN_REQUIRED", "TOOLS_UNKNOWN", "awaiting_login", "login_command", "not_logged_in"]

LOGIN_REQUIRED = "login required"
TOOLS_UNKNOWN = "tool surface unknown"


def awaiting_login(message: str | None) -> str | None:
    """``LoginRequired`` or ``ToolsUnknown`` when a session ended waiting on an OAuth login, else None."""
    if message is None:
        return None
    if message.startswith(LOGIN_REQUIRED):
        return "LoginRequired"
    if message.startswith(TOOLS_UNKNOWN):
        return "ToolsUnknown"
    return None


def login_command(folder: Path | None, server: str) -> str:
    """The command that logs ``server`` of ``folder`` in."""
    where = shlex.quote(str(folder)) if folder is not None else "<folder>"
    return f"clawplane login {where} {shlex.quote(server)}"


def not_logged_in(command: str, *, per_requester: bool) -> str:
    """Why a session could not authenticate, and ``command``, the one to run."""
    if per_requester:
        return (
            f"{TOOLS_UNKNOWN}: each sender logs in to this server through OpenClaw; "
            f"run `{command}` to discover its tools with an operator login"
        )
    return f"{LOGIN_REQUIRED}: run `{command}`"
