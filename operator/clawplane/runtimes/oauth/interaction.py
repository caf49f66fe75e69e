"""How the authorization step reaches a person (or does not).

The authorization-code flow sends someone to the authorization server and waits for the
redirect back with a code. ``NoInteraction`` (the supervisor) never does: the flow stops
with ``LoginRequiredError``, and status says which command to run. ``FollowRedirect`` asks
the authorization URL itself and reads the code from the redirect, for servers that
authorize without a page (test authorization servers such as the conformance suite's).
``LoopbackCallback`` (``clawplane login``) waits on a loopback listener for the browser's
redirect.
"""

from __future__ import annotations

from typing import Protocol
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.shared.auth import AuthorizationCodeResult

__all__ = [
    "FollowRedirect",
    "Interaction",
    "LoginFailedError",
    "LoginRequiredError",
    "NoInteraction",
    "result_from_query",
]


class LoginRequiredError(Exception):
    """The server needs an OAuth login that only a person can give."""


class LoginFailedError(Exception):
    """The authorization server refused the login, or its answer was not usable."""


class Interaction(Protocol):
    """Where the authorization step sends the user and how the code comes back."""

    redirect_uri: str

    async def redirect(self, url: str) -> None:
        """Send the user to the authorization URL ``url``."""
        ...

    async def callback(self) -> AuthorizationCodeResult:
        """The redirect's parameters, once it arrived."""
        ...


def result_from_query(query: str) -> AuthorizationCodeResult:
    """The code, state and issuer of a redirect's query string.

    Raises:
        LoginFailedError: The redirect carries an error, or no code.
    """
    params = {k: v[0] for k, v in parse_qs(query).items() if v}
    if "error" in params:
        detail = params.get("error_description", "")
        raise LoginFailedError(
            f"the authorization server refused: {params['error']!r}" + (f" ({detail!r})" if detail else "")
        )
    if "code" not in params:
        raise LoginFailedError("the redirect back from the authorization server carries no code")
    return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))


class NoInteraction:
    """Nobody to ask: an authorization step ends in ``LoginRequiredError``."""

    def __init__(self, redirect_uri: str = "http://127.0.0.1/callback") -> None:
        self.redirect_uri = redirect_uri

    async def redirect(self, url: str) -> None:
        """Refuse: a login needs a person (``clawplane login``)."""
        raise LoginRequiredError("an OAuth login is required")

    async def callback(self) -> AuthorizationCodeResult:
        """Never reached (``redirect`` refuses)."""
        raise LoginRequiredError("an OAuth login is required")


class FollowRedirect:
    """Ask the authorization URL directly and read the code from its redirect (no page in between)."""

    def __init__(self, redirect_uri: str, *, verify: bool = True, timeout: float = 30.0) -> None:
        self.redirect_uri = redirect_uri
        self._verify = verify
        self._timeout = timeout
        self._result: AuthorizationCodeResult | None = None

    async def redirect(self, url: str) -> None:
        """GET ``url`` without following and keep the redirect's parameters.

        Raises:
            LoginFailedError: The answer is not a redirect to ``redirect_uri``.
        """
        async with httpx2.AsyncClient(verify=self._verify, timeout=self._timeout) as http:
            response = await http.get(url, follow_redirects=False)
        location = response.headers.get("location")
        if location is None:
            status = response.status_code
            raise LoginFailedError(f"the authorization endpoint answered {status}, not a redirect")
        target = urlparse(location)
        expected = urlparse(self.redirect_uri)
        if (target.scheme, target.netloc, target.path) != (expected.scheme, expected.netloc, expected.path):
            raise LoginFailedError("the authorization endpoint redirected elsewhere than the redirect URI")
        self._result = result_from_query(target.query)

    async def callback(self) -> AuthorizationCodeResult:
        """The parameters read by ``redirect``."""
        if self._result is None:
            raise LoginFailedError("no authorization response was received")
        result, self._result = self._result, None
        return result
