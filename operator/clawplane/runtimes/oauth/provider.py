"""clawplane's OAuth 2.1 client for remote MCP servers: the SDK's provider, completed.

``mcp.client.auth.OAuthClientProvider`` does the MCP authorization spec's discovery (RFC 9728
from ``WWW-Authenticate`` or the well-known paths, RFC 8414 / OIDC with ``iss`` checks), PKCE
S256, RFC 8707 resource indicators, client ID metadata documents with dynamic registration as
the fallback, scope selection (``WWW-Authenticate``, then ``scopes_supported``, plus
``offline_access`` where the server offers it), one step-up per request on
``insufficient_scope``, RFC 9207 ``iss`` validation and refresh. ``ServerOAuth`` adds what a
long-running client needs on top:

- the metadata found at login is restored with the tokens, so a refresh after a restart goes
  to the authorization server's token endpoint rather than the resource's origin;
- tokens are refreshed a little before they expire (a tenth of their lifetime, at most a
  minute), not after the server refused one;
- a pre-registered client with a secret authenticates the way the server's metadata offers
  (``client_secret_basic`` first, else ``client_secret_post``);
- the configured ``oauth.scope`` is always part of what is requested;
- without a person to ask (``NoInteraction``) the flow only uses what is stored: the token,
  refreshed when it is due and again when the server refuses it; nothing is registered, and
  a login only a person could give stops the flow with ``LoginRequiredError``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER

from clawplane import __version__
from clawplane.runtimes.oauth.interaction import Interaction, LoginRequiredError, NoInteraction
from clawplane.runtimes.oauth.settings import OAuthSettings
from clawplane.runtimes.oauth.storage import CredentialStorage

__all__ = ["OAuthSettings", "ServerOAuth", "preregistered_client"]

_REFRESH_MARGIN_MAX = 60.0


def preregistered_client(settings: OAuthSettings, redirect_uri: str) -> OAuthClientInformationFull | None:
    """The pre-registered client of ``settings``, when a client id is configured."""
    if settings.client_id is None:
        return None
    return OAuthClientInformationFull(
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        redirect_uris=[redirect_uri],
        token_endpoint_auth_method=None if settings.client_secret else "none",
    )


def _margin(lifetime: float) -> float:
    return min(_REFRESH_MARGIN_MAX, lifetime / 10)


class ServerOAuth(OAuthClientProvider):
    """The OAuth client of one remote server (an ``httpx2.Auth``)."""

    def __init__(
        self,
        server_url: str,
        storage: CredentialStorage,
        interaction: Interaction,
        settings: OAuthSettings,
    ) -> None:
        metadata = OAuthClientMetadata(
            client_name="clawplane",
            software_id="clawplane",
            software_version=__version__,
            redirect_uris=[interaction.redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=settings.scope,
        )
        super().__init__(
            server_url,
            metadata,
            storage,
            redirect_handler=interaction.redirect,
            callback_handler=interaction.callback,
            client_metadata_url=settings.client_metadata_url,
        )
        self.storage = storage
        self._interactive = not isinstance(interaction, NoInteraction)
        self._configured_scope = settings.scope
        self._preregistered = settings.client_id is not None
        self.login_required = False
        """Set when a request needed a login that nobody could give (``NoInteraction``)."""

    async def _initialize(self) -> None:
        await super()._initialize()
        prm, asm = self.storage.metadata()
        ctx = self.context
        if ctx.protected_resource_metadata is None and prm is not None:
            ctx.protected_resource_metadata = prm
            if prm.authorization_servers:
                ctx.auth_server_url = str(prm.authorization_servers[0])
        if ctx.oauth_metadata is None and asm is not None:
            ctx.oauth_metadata = asm
        expires_at = self.storage.expires_at
        if ctx.current_tokens is not None and expires_at is not None:
            lifetime = ctx.current_tokens.expires_in or 0
            ctx.token_expiry_time = expires_at - _margin(lifetime)

    def _expire_early(self) -> None:
        tokens, expiry = self.context.current_tokens, self.context.token_expiry_time
        if tokens is not None and tokens.expires_in is not None and expiry is not None:
            self.context.token_expiry_time = expiry - _margin(tokens.expires_in)

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        self._expire_early()
        self.storage.set_metadata(self.context.protected_resource_metadata, self.context.oauth_metadata)

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        ok = await super()._handle_refresh_response(response)
        if ok:
            self._expire_early()
        return ok

    async def _perform_authorization(self) -> httpx2.Request:
        ctx = self.context
        if self._configured_scope:
            ctx.client_metadata.scope = union_scopes(ctx.client_metadata.scope, self._configured_scope)
        info = ctx.client_info
        chosen = info is not None and bool(info.token_endpoint_auth_method)
        if self._preregistered and info is not None and info.client_secret and not chosen:
            asm = ctx.oauth_metadata
            offered = (asm.token_endpoint_auth_methods_supported if asm else None) or ["client_secret_basic"]
            method = "client_secret_basic" if "client_secret_basic" in offered else "client_secret_post"
            ctx.client_info = info.model_copy(update={"token_endpoint_auth_method": method})
            await self.storage.set_client_info(ctx.client_info)
        return await super()._perform_authorization()

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super()._auth_flow(request) if self._interactive else self._unattended_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except LoginRequiredError:
            self.login_required = True
            raise
        finally:
            await flow.aclose()

    async def _unattended_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The stored token, refreshed when due or refused; a login only a person can give is an error.

        Unlike the interactive flow, a 401 first tries the refresh token (an access token
        revoked or expired early, a clock apart) before anything else; nothing is registered.
        """
        async with self.context.lock:
            if not self._initialized:
                await self._initialize()
            ctx = self.context
            if ctx.current_tokens is None:
                raise LoginRequiredError("no stored OAuth login")
            ctx.protocol_version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
            for attempt in range(2):
                if attempt or not ctx.is_token_valid():
                    if not ctx.can_refresh_token():
                        raise LoginRequiredError("the stored OAuth login expired and cannot be refreshed")
                    refreshed = yield await self._refresh_token()
                    if not await self._handle_refresh_response(refreshed):
                        raise LoginRequiredError("the authorization server refused to refresh the login")
                self._add_auth_header(request)
                response = yield request
                if response.status_code != 401:
                    return
            raise LoginRequiredError("the server refuses the refreshed OAuth token")

    def expires_in(self) -> float | None:
        """Seconds until the held access token is refreshed (None: no expiry known)."""
        expiry = self.context.token_expiry_time
        return None if expiry is None else expiry - time.time()
