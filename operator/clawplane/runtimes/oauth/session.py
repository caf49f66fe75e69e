"""The OAuth client of one runtime session, over the folder's stored login.

The supervisor never asks anyone to log in: an ``auth: oauth`` server's session uses the
credential ``clawplane login`` stored (refreshing it, and writing the refreshed tokens back);
without one the request fails at once (``NoInteraction``) and the runtime ends the session
with ``messages.not_logged_in``. An ``identity: per-requester`` server is discovered with an
operator login when one exists.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from clawplane.runtimes.launch import Launch
from clawplane.runtimes.oauth.interaction import NoInteraction
from clawplane.runtimes.oauth.provider import ServerOAuth, preregistered_client
from clawplane.runtimes.oauth.storage import CredentialStorage
from clawplane.state import StateDB, StateError
from clawplane.state.oauth import CredentialStore

__all__ = ["session_auth"]


@contextlib.asynccontextmanager
async def session_auth(
    server: str, launch: Launch, state_dir: Path | None
) -> AsyncIterator[ServerOAuth | None]:
    """The OAuth client of one session of ``server`` (None unless it is an ``auth: oauth`` server).

    The state database is opened for the length of the session (refreshed tokens are written
    back); without a state directory (a bridge, a one-off probe) nothing is stored to use.
    """
    settings = launch.oauth
    if settings is None:
        yield None
        return
    interaction = NoInteraction()
    db: StateDB | None = None
    store: CredentialStore | None = None
    if state_dir is not None:
        with contextlib.suppress(StateError):
            db = StateDB.open(state_dir, create=False)
            store = CredentialStore.open(db, create_key=False)
    try:
        pre = preregistered_client(settings, interaction.redirect_uri)
        storage = CredentialStorage(store, server, launch.url, preregistered=pre)
        yield ServerOAuth(launch.url, storage, interaction, settings)
    finally:
        if db is not None:
            db.close()
