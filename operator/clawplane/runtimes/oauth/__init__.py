"""OAuth 2.1 for remote MCP servers: the client (the SDK's, completed), its storage, the login."""

from clawplane.runtimes.oauth.interaction import (
    FollowRedirect,
    Interaction,
    LoginFailedError,
    LoginRequiredError,
    NoInteraction,
)
from clawplane.runtimes.oauth.provider import OAuthSettings, ServerOAuth, preregistered_client
from clawplane.runtimes.oauth.storage import CredentialStorage

__all__ = [
    "CredentialStorage",
    "FollowRedirect",
    "Interaction",
    "LoginFailedError",
    "LoginRequiredError",
    "NoInteraction",
    "OAuthSettings",
    "ServerOAuth",
    "preregistered_client",
]
