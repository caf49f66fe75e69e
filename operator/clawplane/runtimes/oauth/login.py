"""``clawplane login`` and ``logout`` for one remote server: the flows, without the terminal.

``login`` runs the authorization-code flow with a loopback redirect: it connects to the
server with no stored tokens, so the server's 401 starts discovery, registration and the
authorization step (``announce`` gets the URL to open), then lists the tools with the new
token; the tokens are sealed in the state database. ``logout`` revokes the refresh and access
tokens where the authorization server has a revocation endpoint (RFC 7009), and forgets
the credential either way, saying which happened.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx2

from clawplane.models import Transport
from clawplane.runtimes.client.connection import open_connection
from clawplane.runtimes.client.listing import ListLimits
from clawplane.runtimes.client.remote import HttpOptions, sse_transport, streamable_http_transport
from clawplane.runtimes.launch import Launch
from clawplane.runtimes.oauth.loopback import LoopbackCallback
from clawplane.runtimes.oauth.provider import ServerOAuth, preregistered_client
from clawplane.runtimes.oauth.rows import CredentialRows
from clawplane.runtimes.oauth.storage import CredentialStorage
from clawplane.state import CredentialStore, StateDB

__all__ = ["LoginResult", "LogoutResult", "login", "logout", "revoke"]

_LIMITS = ListLimits(timeout=60.0, pages=128, items=16_384, bytes=10 * 1024 * 1024)


@dataclass(frozen=True, slots=True)
class LoginResult:
    """What a login got: whether a login was needed at all, the tools it could list, the expiry."""

    asked: bool
    tools: tuple[str, ...]
    expires_at: float | None
    scope: str | None


@dataclass(frozen=True, slots=True)
class LogoutResult:
    """What a logout did: whether a credential was stored, and what revocation said."""

    had_credential: bool
    revoked: str
    """``revoked``, ``not supported`` (no revocation endpoint) or why it failed."""


async def login(
    server: str,
    launch: Launch,
    state_dir: Path | None,
    *,
    announce: Callable[[str], None],
    timeout: float,
    connect_timeout: float,
    rows: CredentialRows | None = None,
) -> LoginResult:
    """Log ``server`` in (authorization code + PKCE through the user's browser) and store the tokens.

    The tokens go to ``rows`` when given (a Kubernetes Secret), else to the sealed store in ``state_dir``.

    Raises:
        TimeoutError: No redirect came back within ``timeout`` seconds.
        NotLoopbackError: ``oauth.redirectUrl`` is not on this machine.
        StartError: The server or the authorization server refused (the message says why).
    """
    settings = launch.oauth
    assert settings is not None, "login is for auth: oauth servers"
    db = StateDB.open(state_dir) if rows is None and state_dir is not None else None
    callback = await LoopbackCallback.open(settings.redirect_url, announce)
    try:
        storage = CredentialStorage(
            rows if db is None else CredentialStore.open(db),
            server,
            launch.url,
            preregistered=preregistered_client(settings, callback.redirect_uri),
        )
        storage.start_login(callback.redirect_uri)
        auth = ServerOAuth(launch.url, storage, callback, settings)
        options = HttpOptions(headers=launch.headers, connect_timeout=connect_timeout, auth=auth)
        transport = sse_transport if launch.transport is Transport.SSE else streamable_http_transport
        with anyio.fail_after(timeout + connect_timeout):
            async with open_connection(
                transport(launch.url, options),
                server=server,
                connect_timeout=timeout + connect_timeout,
                request_timeout=timeout + connect_timeout,
                redact=launch.redact,
            ) as conn:
                tools = await conn.list_tools(_LIMITS)
        tokens = await storage.get_tokens()
        return LoginResult(
            asked=tokens is not None,
            tools=tuple(t.name for t in tools),
            expires_at=storage.expires_at,
            scope=tokens.scope if tokens else None,
        )
    finally:
        await callback.aclose()
        if db is not None:
            db.close()


async def logout(server: str, state_dir: Path, *, timeout: float = 30.0, verify: bool = True) -> LogoutResult:
    """Revoke ``server``'s stored tokens where the authorization server can, and forget them."""
    db = StateDB.open(state_dir, create=False)
    try:
        store = CredentialStore.open(db, create_key=False)
        found = store.get(server)
        if found is None:
            return LogoutResult(False, "nothing to revoke")
        storage = CredentialStorage(store, server, found.url)
        outcome = await revoke(storage, timeout=timeout, verify=verify)
        storage.forget()
        return LogoutResult(True, outcome)
    finally:
        db.close()


async def revoke(storage: CredentialStorage, *, timeout: float, verify: bool = True) -> str:
    """Revoke the stored refresh and access tokens (RFC 7009); what happened, in words."""
    tokens = await storage.get_tokens()
    client = await storage.get_client_info()
    _, asm = storage.metadata()
    if tokens is None or client is None:
        return "nothing to revoke"
    if asm is None or asm.revocation_endpoint is None:
        return "not supported (the authorization server has no revocation endpoint)"
    pairs = [(tokens.refresh_token, "refresh_token"), (tokens.access_token, "access_token")]
    async with httpx2.AsyncClient(timeout=timeout, verify=verify) as http:
        for token, hint in pairs:
            if token is None:
                continue
            data = {"token": token, "token_type_hint": hint}
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
            method = client.token_endpoint_auth_method
            if method == "client_secret_basic" and client.client_secret:
                pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
                headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
            else:
                data["client_id"] = client.client_id
                if method == "client_secret_post" and client.client_secret:
                    data["client_secret"] = client.client_secret
            try:
                response = await http.post(str(asm.revocation_endpoint), data=data, headers=headers)
            except httpx2.HTTPError as exc:
                return f"failed ({type(exc).__name__})"
            if response.status_code != 200:
                return f"failed (HTTP {response.status_code})"
    return "revoked"
