"""Where a session's OAuth credential lives: the protocol ``CredentialStorage`` writes through.

``CredentialRows`` is what the sealed state-database store already is (``state.oauth``):
read, write and forget one server's credential document, each write a new version. A
``CredentialSource`` opens the rows for one session and names the command that logs a
server in. The local source is the folder's state directory; the Kubernetes operator passes
its own (a Secret per server, ``k8s.oauthsecrets``) through ``RuntimeSettings.credentials``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from clawplane.runtimes.oauth.messages import login_command
from clawplane.state import Credential, CredentialStore, StateDB, StateError

__all__ = ["CredentialRows", "CredentialSource", "StateDirCredentials"]


class CredentialRows(Protocol):
    """One place's stored OAuth credentials, by server name."""

    def get(self, server: str) -> Credential | None:
        """``server``'s credential, or None."""

    def put(self, server: str, url: str, document: dict[str, Any], *, expires_at: float | None) -> bytes:
        """Store ``document`` as ``server``'s credential for ``url``; the new version."""

    def delete(self, server: str) -> bool:
        """Forget ``server``'s credential; True when there was one."""


class CredentialSource(Protocol):
    """Opens the credential rows a session of one server reads and writes back to."""

    def open(self, server: str) -> AbstractAsyncContextManager[CredentialRows | None]:
        """The rows for the length of a session (None: nothing stored anywhere to use)."""

    def login_command(self, server: str) -> str:
        """The command a person runs to log ``server`` in."""


@dataclass(frozen=True, slots=True)
class StateDirCredentials:
    """The folder's sealed store in its state database (None when there is no state directory)."""

    state_dir: Path | None
    folder: Path | None = None

    @contextlib.asynccontextmanager
    async def open(self, server: str) -> AsyncIterator[CredentialRows | None]:
        """The store, open for the length of the session (refreshed tokens are written back)."""
        if self.state_dir is None:
            yield None
            return
        try:
            db = StateDB.open(self.state_dir, create=False)
        except StateError:
            yield None
            return
        try:
            try:
                store: CredentialStore | None = CredentialStore.open(db, create_key=False)
            except StateError:
                store = None
            yield store
        finally:
            db.close()

    def login_command(self, server: str) -> str:
        """``clawplane login FOLDER SERVER``."""
        return login_command(self.folder, server)
