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
from typing import TYPE_CHECKING

from clawplane.runtimes.launch import Launch
from clawplane.runtimes.oauth.interaction import NoInteraction
from clawplane.runtimes.oauth.provider import ServerOAuth, preregistered_client
from clawplane.runtimes.oauth.rows import CredentialSource, StateDirCredentials
from clawplane.runtimes.oauth.storage import CredentialStorage

if TYPE_CHECKING:
    from clawplane.runtimes.settings import RuntimeSettings

__all__ = ["credential_source", "session_auth"]


def credential_source(settings: RuntimeSettings) -> CredentialSource:
    """Where sessions under ``settings`` find logins: the given source, else the folder's state directory."""
    return settings.credentials or StateDirCredentials(settings.state_dir, settings.folder)


@contextlib.asynccontextmanager
async def session_auth(
    server: str, launch: Launch, source: CredentialSource
) -> AsyncIterator[ServerOAuth | None]:
    """The OAuth client of one session of ``server`` (None unless it is an ``auth: oauth`` server).

    The credential rows stay open for the length of the session (refreshed tokens are written
    back); a source with nothing stored (a bridge, a one-off probe) gives a session that must log in.
    """
    settings = launch.oauth
    if settings is None:
        yield None
        return
    interaction = NoInteraction()
    async with source.open(server) as store:
        pre = preregistered_client(settings, interaction.redirect_uri)
        storage = CredentialStorage(store, server, launch.url, preregistered=pre)
        yield ServerOAuth(launch.url, storage, interaction, settings)
