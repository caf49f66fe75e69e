"""Who may talk to a proxy listener: Host/Origin checks (DNS rebinding) and bearer tokens.

Every request passes ``RequestGuard.check`` before anything else looks at it:

1. ``Host`` must name the listener: on a loopback address only loopback names
   (``127.0.0.1``, ``localhost``, ``[::1]``, any port) — a page on another site that
   resolves its own name to 127.0.0.1 is refused with 421, as the MCP SDK does; on
   another address, the hosts given with ``allowed_hosts`` (any when none are given, as
   behind a Kubernetes Service whose names the pod cannot know).
2. ``Origin``, when a browser sends one, must be a loopback origin (loopback listener) or
   one of ``allowed_origins``; otherwise 403.
3. ``Authorization: Bearer <token>`` must name a known token: none → 401 with
   ``WWW-Authenticate``; a token that does not reach the requested server → 403
   (``insufficient_scope``). Tokens are compared by SHA-256 digest, so the lookup does not
   leak their prefix through timing, and the table holds no plaintext.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

from starlette.types import Scope, Send

__all__ = [
    "Principal",
    "RequestGuard",
    "TokenTable",
    "is_loopback",
    "reply",
    "token_digest",
]

_LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


@functools.lru_cache(maxsize=512)  # asked on every request, with a handful of distinct names
def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or a Host name) is a loopback address."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def token_digest(token: str) -> str:
    """The hex SHA-256 of a token: how tokens are looked up and compared."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller: which consumer it is and what it may reach."""

    consumer: str
    servers: frozenset[str] | None = None
    """Servers this token reaches (None: every server of the listener)."""
    scopes: frozenset[str] = frozenset()

    def may_reach(self, server: str) -> bool:
        """Whether the token reaches ``server``."""
        return self.servers is None or server in self.servers


class Authorizer(Protocol):
    """Maps a presented token to its principal."""

    def authenticate(self, token: str) -> Principal | None:
        """The principal of ``token``, or None when it is unknown."""
        ...


@dataclass
class TokenTable:
    """Tokens by digest; ``replace`` swaps the whole table at once (rotation, new renders)."""

    _by_digest: dict[str, Principal] = field(default_factory=dict)

    @classmethod
    def of(cls, tokens: Mapping[str, Principal]) -> TokenTable:
        """A table from plaintext token → principal (the plaintext is not kept)."""
        return cls({token_digest(t): p for t, p in tokens.items()})

    def replace(self, digests: Mapping[str, Principal]) -> None:
        """Use these digest → principal entries from now on."""
        self._by_digest = dict(digests)

    def authenticate(self, token: str) -> Principal | None:
        """The principal of ``token``, or None."""
        return self._by_digest.get(token_digest(token))

    def holder(self, digest: str) -> Principal | None:
        """The principal of the token whose digest is ``digest`` (None: unknown, or rotated away)."""
        return self._by_digest.get(digest)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


@functools.lru_cache(maxsize=512)
def _host_name(host_header: str) -> str:
    try:
        parsed = urlsplit(f"//{host_header}")
        return (parsed.hostname or "").lower()
    except ValueError:
        return ""


async def reply(
    send: Send, status: int, body: object, *, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """Send a small JSON response."""
    data = json.dumps(body).encode("utf-8")
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": data})


def _jsonrpc_error(message: str, code: int = -32600) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


@dataclass
class RequestGuard:
    """Host/Origin and token checks for one listener (see the module docstring)."""

    bind_host: str
    authorizer: Authorizer | None
    """None: no authentication (only ever on a loopback listener, asked for explicitly)."""
    allowed_hosts: frozenset[str] = frozenset()
    allowed_origins: frozenset[str] = frozenset()
    realm: str = "clawplane"

    @property
    def loopback(self) -> bool:
        """Whether the listener is on a loopback address."""
        return is_loopback(self.bind_host)

    def host_ok(self, scope: Scope) -> bool:
        """Whether ``Host`` names this listener."""
        host = _header(scope, b"host")
        if not host:
            return False
        name = _host_name(host)
        if self.allowed_hosts:
            return name in self.allowed_hosts or host.lower() in self.allowed_hosts
        if self.loopback:
            return name in _LOOPBACK_NAMES or is_loopback(name)
        return True

    def origin_ok(self, scope: Scope) -> bool:
        """Whether a browser ``Origin``, if any, may call this listener."""
        origin = _header(scope, b"origin")
        if origin is None:
            return True
        if origin.lower() in self.allowed_origins:
            return True
        try:
            parsed = urlsplit(origin)
        except ValueError:
            return False
        return self.loopback and parsed.scheme in ("http", "https") and is_loopback(parsed.hostname or "")

    async def check_origin(self, scope: Scope, send: Send) -> bool:
        """Refuse (421/403) a request whose Host or Origin is foreign; True when it may go on."""
        if not self.host_ok(scope):
            await reply(
                send, 421, _jsonrpc_error("Invalid Host header: this listener only answers to its own name")
            )
            return False
        if not self.origin_ok(scope):
            await reply(send, 403, _jsonrpc_error("Invalid Origin header: cross-site requests are refused"))
            return False
        return True

    def principal(self, scope: Scope) -> Principal | None:
        """The caller's principal from its bearer token (None: missing or unknown)."""
        if self.authorizer is None:
            return Principal("anonymous")
        value = _header(scope, b"authorization") or ""
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.authorizer.authenticate(token.strip())

    async def authenticate(self, scope: Scope, send: Send) -> Principal | None:
        """The caller's principal, or None after answering 401."""
        principal = self.principal(scope)
        if principal is None:
            given = bool(_header(scope, b"authorization"))
            detail = "invalid_token" if given else "invalid_request"
            message = (
                "the bearer token is not valid here (rotated or from another folder?)"
                if given
                else "this endpoint needs Authorization: Bearer <token>"
            )
            challenge = f'Bearer realm="{self.realm}", error="{detail}"'.encode()
            await reply(
                send,
                401,
                _jsonrpc_error(f"{message}; `clawplane token show` prints the tokens of a folder"),
                headers=[(b"www-authenticate", challenge)],
            )
        return principal

    async def forbid(self, send: Send, principal: Principal, server: str) -> None:
        """Answer 403: ``principal`` is valid but does not reach ``server``."""
        challenge = f'Bearer realm="{self.realm}", error="insufficient_scope"'.encode()
        await reply(
            send,
            403,
            _jsonrpc_error(
                f'the token of consumer "{principal.consumer}" does not reach MCP server "{server}": '
                "each token reaches only the servers rendered into its consumer's config"
            ),
            headers=[(b"www-authenticate", challenge)],
        )
