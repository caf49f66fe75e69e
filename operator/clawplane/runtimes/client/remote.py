"""Client transports for remote servers: streamable HTTP and the legacy SSE transport.

Headers (secret references already resolved) go on every request. ``connectionTimeoutMs``
bounds opening a connection; reads are unbounded at the HTTP level because server streams
stay open for a long time, and every request is bounded by ``requestTimeoutMs`` in the
session instead. ``sslVerify``, ``clientCert`` and ``clientKey`` configure TLS; an ``auth``
(the OAuth client of an ``auth: oauth`` server) signs every request.

A handshake-era streamable HTTP session opens its standalone ``GET`` stream (where the server
sends notifications and, after a dropped response stream, resumed answers) in the background;
``StreamableHttpTransport.settle`` waits for the server's answer to that ``GET`` so nothing sent
right after the connect goes to a stream that is not yet open.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

__all__ = ["HttpOptions", "StreamableHttpTransport", "sse_transport", "streamable_http_transport"]

_SESSION_HEADER = "mcp-session-id"


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
        self,
        headers: Mapping[str, str] | None = None,
        auth: httpx2.Auth | None = None,
        on_response: Callable[[httpx2.Response], Awaitable[None]] | None = None,
    ) -> httpx2.AsyncClient:
        """A new HTTP client with these options (extra ``headers`` win over configured ones)."""
        merged = {**self.headers, **(headers or {})}
        kwargs: dict[str, Any] = {
            "headers": merged,
            "timeout": httpx2.Timeout(self.connect_timeout, read=None),
            "verify": self.verify,
        }
        if on_response is not None:
            kwargs["event_hooks"] = {"response": [on_response]}
        if self.cert is not None:
            kwargs["cert"] = self.cert
        if auth is not None or self.auth is not None:
            kwargs["auth"] = auth if auth is not None else self.auth
        return httpx2.AsyncClient(**kwargs)


class StreamableHttpTransport:
    """Streams for a ``ClientSession`` over streamable HTTP at ``url`` (an async context manager)."""

    def __init__(self, url: str, options: HttpOptions) -> None:
        self.url = url
        self.options = options
        self._session = False
        self._listening = anyio.Event()
        self._stack = contextlib.AsyncExitStack()

    async def _seen(self, response: httpx2.Response) -> None:
        if response.request.method == "GET":
            self._listening.set()
        elif _SESSION_HEADER in response.headers:
            self._session = True

    @property
    def listening(self) -> bool:
        """The server has answered the standalone ``GET`` stream (a session's notification stream)."""
        return self._listening.is_set()

    async def settle(self, timeout: float) -> None:
        """Wait (at most ``timeout``) until the server answered the standalone ``GET`` stream.

        The SDK opens that stream only for a session with an id, so without one there is
        nothing to wait for.
        """
        if self._session:
            with anyio.move_on_after(timeout):
                await self._listening.wait()

    async def __aenter__(self) -> TransportStreams:
        async with contextlib.AsyncExitStack() as stack:
            http = await stack.enter_async_context(self.options.client(on_response=self._seen))
            streams = await stack.enter_async_context(streamable_http_client(self.url, http_client=http))
            self._stack = stack.pop_all()
        return streams

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._stack.__aexit__(*exc_info)


def streamable_http_transport(url: str, options: HttpOptions) -> StreamableHttpTransport:
    """Streams for a ``ClientSession`` over streamable HTTP at ``url``."""
    return StreamableHttpTransport(url, options)


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
