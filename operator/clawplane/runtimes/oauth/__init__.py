"""OAuth 2.1 for remote MCP servers: the client (the SDK's, completed), its storage, the login.

The names resolve on first use (PEP 562): ``status`` and ``apply`` read ``awaiting_login``
without loading the MCP SDK that ``provider`` and ``login`` need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clawplane._utils.lazy import LazyNames

if TYPE_CHECKING:
    from clawplane.runtimes.oauth.login import login, logout, revoke
    from clawplane.runtimes.oauth.loopback import NotLoopbackError
    from clawplane.runtimes.oauth.messages import awaiting_login, not_logged_in
    from clawplane.runtimes.oauth.rows import CredentialRows, CredentialSource
    from clawplane.runtimes.oauth.session import credential_source, session_auth
    from clawplane.runtimes.oauth.settings import OAuthSettings
    from clawplane.runtimes.oauth.storage import CredentialStorage

_HOMES: dict[str, str] = {
    "CredentialRows": "clawplane.runtimes.oauth.rows",
    "CredentialSource": "clawplane.runtimes.oauth.rows",
    "CredentialStorage": "clawplane.runtimes.oauth.storage",
    "NotLoopbackError": "clawplane.runtimes.oauth.loopback",
    "OAuthSettings": "clawplane.runtimes.oauth.settings",
    "awaiting_login": "clawplane.runtimes.oauth.messages",
    "credential_source": "clawplane.runtimes.oauth.session",
    "login": "clawplane.runtimes.oauth.login",
    "logout": "clawplane.runtimes.oauth.login",
    "not_logged_in": "clawplane.runtimes.oauth.messages",
    "revoke": "clawplane.runtimes.oauth.login",
    "session_auth": "clawplane.runtimes.oauth.session",
}

__all__ = [
    "CredentialRows",
    "CredentialSource",
    "CredentialStorage",
    "NotLoopbackError",
    "OAuthSettings",
    "awaiting_login",
    "credential_source",
    "login",
    "logout",
    "not_logged_in",
    "revoke",
    "session_auth",
]

_LAZY = LazyNames(__name__, _HOMES, globals())


def __getattr__(name: str) -> Any:
    """Import the module that defines a public name when it is first read."""
    return _LAZY.getattr(name)


def __dir__() -> list[str]:
    """The public names, loaded or not."""
    return _LAZY.dir()
