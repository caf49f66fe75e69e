"""OAuth credentials of remote servers, encrypted at rest in the state database.

A credential (tokens, the client registration, the authorization server's metadata) is one
JSON document sealed with AES-256-GCM; the associated data binds it to the server's name and
URL, so a row copied to another server or URL does not open. The key is 32 random bytes in
``oauth.key`` in the state directory: beside the database, never in it (a copy of the
database alone reveals nothing), 0600 whatever the umask, made on first use. A key file
that is not 32 bytes, or that does not open a row, is a clear error, never a silent reset.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from clawplane.state.db import StateDB, StateError, open_state_dir, utcnow

__all__ = ["KEY_NAME", "Credential", "CredentialStore", "OAuthKeyError", "load_key"]

KEY_NAME = "oauth.key"
_KEY_BYTES = 32
_NONCE_BYTES = 12


class OAuthKeyError(StateError):
    """The key that seals OAuth credentials is missing, malformed or not the one they were sealed with."""


def load_key(state_dir: Path, *, create: bool = True) -> bytes:
    """The folder's credential key from ``state_dir/oauth.key`` (made 0600 when missing and ``create``).

    Raises:
        OAuthKeyError: The file is not a key, or is missing and ``create`` is False.
        StateError: The state directory cannot be used.
    """
    with open_state_dir(state_dir, create=create) as folder:
        data = folder.read(KEY_NAME)
        if data is None:
            if not create:
                raise OAuthKeyError(f"no OAuth key at {folder.path / KEY_NAME}; run `clawplane login` again")
            data = os.urandom(_KEY_BYTES)
            folder.write_atomic(KEY_NAME, data)
        else:
            folder.tighten(KEY_NAME)
        if len(data) != _KEY_BYTES:
            raise OAuthKeyError(
                f"{folder.path / KEY_NAME} is not an OAuth key ({len(data)} bytes, expected {_KEY_BYTES}); "
                "remove it and run `clawplane login` again for each server"
            )
        return data


@dataclass(frozen=True, slots=True)
class Credential:
    """One server's stored credential: the URL it is for and its (decrypted) document."""

    server: str
    url: str
    document: dict[str, Any]
    expires_at: float | None
    version: bytes
    """Changes with every ``put`` (the seal's nonce): tells a writer whether someone else wrote since."""


def _aad(server: str, url: str) -> bytes:
    return json.dumps(["clawplane-oauth/1", server, url]).encode()


class CredentialStore:
    """Sealed OAuth credentials in one folder's state database."""

    def __init__(self, db: StateDB, key: bytes) -> None:
        self._db = db
        self._aead = AESGCM(key)

    @classmethod
    def open(cls, db: StateDB, *, create_key: bool = True) -> CredentialStore:
        """The store of ``db``, with the key from the database's own state directory."""
        return cls(db, load_key(db.path.parent, create=create_key))

    def get(self, server: str) -> Credential | None:
        """``server``'s credential, or None when there is none.

        Raises:
            OAuthKeyError: The row does not open with this key (the key file was replaced).
        """
        rows = self._db.query(
            "SELECT url, sealed, expires_at FROM oauth_credentials WHERE server = ?", (server,)
        )
        if not rows:
            return None
        url, sealed = rows[0]["url"], bytes(rows[0]["sealed"])
        try:
            plain = self._aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], _aad(server, url))
        except InvalidTag:
            raise OAuthKeyError(
                f'the stored OAuth credential of "{server}" does not open with the key in {KEY_NAME} '
                f"(was the key replaced?); run `clawplane logout` and `clawplane login` for it again"
            ) from None
        return Credential(server, url, json.loads(plain), rows[0]["expires_at"], sealed[:_NONCE_BYTES])

    def put(self, server: str, url: str, document: dict[str, Any], *, expires_at: float | None) -> bytes:
        """Seal and store ``document`` as ``server``'s credential for ``url`` (replacing any); its version."""
        nonce = os.urandom(_NONCE_BYTES)
        sealed = nonce + self._aead.encrypt(nonce, json.dumps(document).encode(), _aad(server, url))
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO oauth_credentials (server, url, sealed, expires_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(server) DO UPDATE SET url = excluded.url, "
                "sealed = excluded.sealed, expires_at = excluded.expires_at, "
                "updated_at = excluded.updated_at",
                (server, url, sealed, expires_at, utcnow()),
            )
        return nonce

    def delete(self, server: str) -> bool:
        """Forget ``server``'s credential; True when there was one."""
        with self._db.transaction() as conn:
            return conn.execute("DELETE FROM oauth_credentials WHERE server = ?", (server,)).rowcount > 0

    def servers(self) -> dict[str, str]:
        """Every server with a stored credential, and the URL it is for (nothing is decrypted)."""
        return {r["server"]: r["url"] for r in self._db.query("SELECT server, url FROM oauth_credentials")}
