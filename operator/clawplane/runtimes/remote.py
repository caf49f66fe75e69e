"""Client transports for remote servers: streamable HTTP and the legacy SSE transport.

Headers (secret references already resolved) go on every request. ``connectionTimeoutMs``
bounds opening a connection; reads are unbounded at the HTTP level because server streams
stay open for a long time, and every request is bounded by ``requestTimeoutMs`` in the
session instead. ``sslVerify``, ``clientCert`` and ``clientKey`` configure TLS; an ``auth``
(the OAuth client of an ``auth: oauth`` server) signs every request.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

__all__ = ["HttpOptions", "sse_transport", "streamable_http_transport"]


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """How to reach a remote server: headers, connect timeout and TLS settings."""

    headers: Mapping[str, str]
    connect_timeout: float
    verify: bool = True
    cert: tuple[str, str] | str | None = None
    auth: httpx2.Auth | None = None
    """Authenticates every request (the server's OAuth client, ``runtimes/oauth``)."""

    def client(
        self, headers: Mapping[str, str] | None = None, auth: httpx2.Auth | None = None
    ) -> httpx2.AsyncClient:
        """A new HTTP client with these options (extra ``headers`` win over configured ones)."""
        merged = {**self.headers, **(headers or {})}
        kwargs: dict[str, Any] = {
            "headers": merged,
            "timeout": httpx2.Timeout(self.connect_timeout, read=None),
            "verify": self.verify,
        }
        if self.cert is not None:
            kwargs["cert"] = self.cert
        if auth is not None or self.auth is not None:
            kwargs["auth"] = auth if auth is not None else self.auth
        return httpx2.AsyncClient(**kwargs)


@contextlib.asynccontextmanager
async def streamable_http_transport(url: str, options: HttpOptions) -> AsyncIterator[TransportStreams]:
    """Streams for a ``ClientSession`` over streamable HTTP at ``url``."""
    async with options.client() as http, streamable_http_client(url, http_client=http) as streams:
        yield streams


@contextlib.asynccontextmanager
async def sse_transport(url: str, options: HttpOptions) -> AsyncIterator[TransportStreams]:
    """Streams for a ``ClientSession`` over the legacy SSE transport at ``url``."""

    def factory(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        return options.client(headers, auth)

    # The factory ignores the SDK's timeouts: ``options`` already carries the connect timeout.
    async with sse_client(url, timeout=options.connect_timeout, httpx_client_factory=factory) as streams:
        yield streams
