"""The loopback redirect listener of ``clawplane login`` (RFC 8252 §7.3).

It listens on 127.0.0.1 (a random free port unless ``oauth.redirectUrl`` names a loopback
address with a port), and answers the browser's redirect. Only a request to the redirect
path that carries the ``state`` of the authorization URL handed out completes the wait;
anything else gets a 400 or 404 and the wait goes on, so another local process cannot
inject its own code. Query values shown in the page are HTML-escaped.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Callable
from urllib.parse import parse_qs, urlparse

import anyio
from anyio.abc import SocketAttribute, SocketListener, SocketStream
from mcp.shared.auth import AuthorizationCodeResult

from clawplane.runtimes.oauth.interaction import LoginFailedError, result_from_query

__all__ = ["LoopbackCallback", "NotLoopbackError"]

_LOOPBACK_NAMES = {"127.0.0.1": "127.0.0.1", "localhost": "127.0.0.1", "[::1]": "::1", "::1": "::1"}
_REQUEST_LIMIT = 16 * 1024
_READ_SECONDS = 10.0
_DONE_PAGE = "<!doctype html><title>clawplane login</title><p>{}</p><p>You can close this window.</p>"


class NotLoopbackError(ValueError):
    """``redirectUrl`` is not an http URL on this machine's loopback interface."""


class LoopbackCallback:
    """Hands out the authorization URL and waits on the loopback listener for the redirect."""

    def __init__(self, listener: SocketListener, redirect_uri: str, announce: Callable[[str], None]) -> None:
        self._listener = listener
        self.redirect_uri = redirect_uri
        self._path = urlparse(redirect_uri).path or "/"
        self._announce = announce
        self._state: str | None = None

    @classmethod
    async def open(cls, redirect_url: str | None, announce: Callable[[str], None]) -> LoopbackCallback:
        """Listen for the redirect (on ``redirect_url`` when given, else 127.0.0.1 on a free port).

        Raises:
            NotLoopbackError: ``redirect_url`` is not ``http://`` on a loopback address.
            OSError: The port is taken.
        """
        host, port, path = "127.0.0.1", 0, "/callback"
        if redirect_url is not None:
            parsed = urlparse(redirect_url)
            bind = _LOOPBACK_NAMES.get((parsed.hostname or "").lower()) if parsed.scheme == "http" else None
            if bind is None:
                raise NotLoopbackError(
                    f"redirectUrl {redirect_url!r} is not an http:// URL on 127.0.0.1, [::1] or localhost: "
                    "`clawplane login` receives the redirect on this machine"
                )
            host, port, path = bind, parsed.port or 0, parsed.path or "/"
        listener = await anyio.create_tcp_listener(local_host=host, local_port=port)
        socket_listener = listener.listeners[0]
        assert isinstance(socket_listener, SocketListener)
        bound = socket_listener.extra(SocketAttribute.local_port)
        if redirect_url is not None and urlparse(redirect_url).port:
            uri = redirect_url
        else:
            shown = f"[{host}]" if ":" in host else host
            uri = f"http://{shown}:{bound}{path}"
        return cls(socket_listener, uri, announce)

    async def aclose(self) -> None:
        """Stop listening."""
        await self._listener.aclose()

    async def redirect(self, url: str) -> None:
        """Remember the authorization URL's ``state`` and hand the URL to the user."""
        states = parse_qs(urlparse(url).query).get("state")
        self._state = states[0] if states else None
        self._announce(url)

    async def callback(self) -> AuthorizationCodeResult:
        """The first redirect to the redirect path with the expected ``state``.

        Raises:
            LoginFailedError: The authorization server redirected back with an error.
        """
        while True:
            stream = await self._listener.accept()
            async with stream:
                try:
                    with anyio.fail_after(_READ_SECONDS):
                        target = await _request_target(stream)
                except (TimeoutError, OSError, anyio.EndOfStream, anyio.BrokenResourceError, ValueError):
                    continue
                parsed = urlparse(target)
                if parsed.path != self._path:
                    await _answer(stream, 404, "Not the redirect path.")
                    continue
                params = parse_qs(parsed.query)
                if self._state is None or params.get("state", [None])[0] != self._state:
                    await _answer(stream, 400, "Not an answer to the login in progress (state mismatch).")
                    continue
                try:
                    result = result_from_query(parsed.query)
                except LoginFailedError as exc:
                    await _answer(stream, 400, f"Login failed: {exc}")
                    raise
                await _answer(stream, 200, "Logged in: clawplane has the credential.")
                return result


async def _request_target(stream: SocketStream) -> str:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive(4096)
        data += chunk
        if len(data) > _REQUEST_LIMIT:
            raise ValueError("request too large")
    line = data.split(b"\r\n", 1)[0].decode("latin-1")
    method, target, _version = line.split(" ", 2)
    if method != "GET":
        raise ValueError("not a GET")
    return target


async def _answer(stream: SocketStream, status: int, text: str) -> None:
    body = _DONE_PAGE.format(html.escape(text)).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError, anyio.BrokenResourceError):  # the browser may have gone
        await stream.send(head.encode() + body)
