"""Exceptions raised by the MCP runtimes.

Every message is safe to show: secret values are redacted before an error is built.

```
McpRuntimeError
├── UnknownServerError        no runtime by that name
├── ServerUnavailableError    not connected right now (starting, restarting, stopped)
│   └── ServerPausedError     paused after repeated failures; ``retry_at`` says until when
├── RequestFailedError        a request to a connected server failed (error, timeout, closed)
│   └── RequestTimeoutError   ... because it took longer than ``requestTimeoutMs``
├── StartError                a server could not be started or connected
│   └── ConnectTimeoutError   ... because initialize did not finish within ``connectionTimeoutMs``
└── ListingError              a list (tools, resources, prompts) broke OpenClaw's bounds
```
"""

from __future__ import annotations

from datetime import datetime

__all__ = [
    "ConnectTimeoutError",
    "ListingError",
    "McpRuntimeError",
    "RequestFailedError",
    "RequestTimeoutError",
    "ServerPausedError",
    "ServerUnavailableError",
    "StartError",
    "UnknownServerError",
]


class McpRuntimeError(Exception):
    """Base of every runtime error."""


class UnknownServerError(McpRuntimeError):
    """The supervisor runs no server by that name."""


class ServerUnavailableError(McpRuntimeError):
    """The server exists but is not connected right now."""


class ServerPausedError(ServerUnavailableError):
    """The server is paused after repeated failed requests."""

    def __init__(self, server: str, retry_at: datetime) -> None:
        self.server = server
        self.retry_at = retry_at
        stamp = retry_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        super().__init__(f'MCP server "{server}" is paused after repeated tool failures; retry after {stamp}')


class RequestFailedError(McpRuntimeError):
    """A request to a connected server failed; ``code`` is the JSON-RPC error code, if any."""

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class RequestTimeoutError(RequestFailedError):
    """A request took longer than the server's ``requestTimeoutMs``."""


class StartError(McpRuntimeError):
    """The server could not be started or connected."""


class ConnectTimeoutError(StartError):
    """The server did not finish initialize within ``connectionTimeoutMs``."""

    def __init__(self, server: str, seconds: float) -> None:
        super().__init__(f'MCP server "{server}" timed out: did not complete initialize within {seconds:g}s')


class ListingError(McpRuntimeError):
    """A listing exceeded OpenClaw's page, item or byte bounds, or repeated a cursor."""
