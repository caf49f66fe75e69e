"""The SDK's token storage over the folder's sealed credential store.

One server's credential document holds what the OAuth client must remember between
processes: the tokens (with their absolute expiry, which ``expires_in`` alone loses), the
client registration, and the protected-resource and authorization-server metadata (so a
refresh after a restart goes to the right token endpoint without a 401 first). A
pre-registered client (``oauth.clientId``) wins over any stored registration of another id.
Without a store (``store=None``) the document lives in memory only.
"""

from __future__ import annotations

import time
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken, ProtectedResourceMetadata

from clawplane.runtimes.oauth.rows import CredentialRows

__all__ = ["CredentialStorage"]


class CredentialStorage:
    """``mcp.client.auth.TokenStorage`` for one server, over its stored rows (``rows.CredentialRows``)."""

    def __init__(
        self,
        store: CredentialRows | None,
        server: str,
        url: str,
        *,
        preregistered: OAuthClientInformationFull | None = None,
    ) -> None:
        self._store = store
        self.server = server
        self.url = url
        self._pre = preregistered
        found = store.get(server) if store is not None else None
        # A credential obtained for another URL is for another resource: never presented here.
        self._doc: dict[str, Any] = dict(found.document) if found is not None and found.url == url else {}
        self._version = found.version if found is not None else None
        self.superseded = False
        self._authoritative = False
        """Set when the stored row was deleted or replaced by another process while this one held it."""

    @property
    def logged_in(self) -> bool:
        """Whether tokens are stored."""
        return "tokens" in self._doc

    @property
    def expires_at(self) -> float | None:
        """When the stored access token expires (unix time), if the server said."""
        value = self._doc.get("expires_at")
        return float(value) if value is not None else None

    def _save(self) -> None:
        """Store the document, unless another process changed the row since it was read.

        A long session (the supervisor's) must not undo ``clawplane logout`` by writing refreshed
        tokens back, nor overwrite a newer ``clawplane login``: then the stored row wins.
        """
        if self._store is None:
            return
        if self._version is not None and not self._authoritative:
            now = self._store.get(self.server)
            if now is None or now.version != self._version:
                self.superseded = True
                return
        self._version = self._store.put(self.server, self.url, self._doc, expires_at=self.expires_at)

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens."""
        raw = self._doc.get("tokens")
        return OAuthToken.model_validate(raw) if raw is not None else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Store ``tokens`` with their absolute expiry."""
        self._doc["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        self._doc["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self._save()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The stored registration, or the pre-registered client."""
        raw = self._doc.get("client")
        stored = OAuthClientInformationFull.model_validate(raw) if raw is not None else None
        if self._pre is not None and (stored is None or stored.client_id != self._pre.client_id):
            return self._pre
        return stored

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Store the client registration."""
        self._doc["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._save()

    def metadata(self) -> tuple[ProtectedResourceMetadata | None, OAuthMetadata | None]:
        """The protected-resource and authorization-server metadata found at the last login."""
        prm, asm = self._doc.get("resource_metadata"), self._doc.get("server_metadata")
        return (
            ProtectedResourceMetadata.model_validate(prm) if prm is not None else None,
            OAuthMetadata.model_validate(asm) if asm is not None else None,
        )

    def set_metadata(self, prm: ProtectedResourceMetadata | None, asm: OAuthMetadata | None) -> None:
        """Remember the metadata the flow discovered (saved only when it changed)."""
        doc = dict(self._doc)
        if prm is not None:
            doc["resource_metadata"] = prm.model_dump(mode="json", exclude_none=True)
        if asm is not None:
            doc["server_metadata"] = asm.model_dump(mode="json", exclude_none=True)
        if doc != self._doc:
            self._doc = doc
            if "tokens" in doc:
                self._save()

    def start_login(self, redirect_uri: str) -> None:
        """Drop the stored tokens before a new login; keep a registration only if it has ``redirect_uri``.

        What the login stores replaces whatever another process wrote meanwhile.
        """
        self._authoritative = True
        self._doc.pop("tokens", None)
        self._doc.pop("expires_at", None)
        client = self._doc.get("client")
        if client is not None and redirect_uri not in (client.get("redirect_uris") or []):
            self._doc.pop("client")

    def forget(self) -> None:
        """Drop everything stored for this server (tokens, registration, metadata)."""
        self._doc = {}
        self._version = None
        if self._store is not None:
            self._store.delete(self.server)
