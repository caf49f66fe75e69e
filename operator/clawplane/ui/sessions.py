"""Dashboard logins: a random session id in an HttpOnly cookie, and only its digest kept here.

A session remembers the digest of the token it was opened with, never the token, and is
valid only while that digest still names a principal in the listener's token table: a
rotated token ends every session opened with it. Sessions live in memory (a restarted
supervisor asks everyone to log in again), expire after ``TTL_S`` and are bounded in number:
at most ``MAX_SESSIONS``, of which one consumer holds at most ``MAX_PER_CONSUMER`` (its own
least recently used login makes room for its next one), so logging in over and over with one
token cannot log everyone else out.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, replace

from clawplane.runtimes import Principal, TokenTable, token_digest

__all__ = ["COOKIE", "MAX_PER_CONSUMER", "MAX_SESSIONS", "TTL_S", "Session", "Sessions"]

COOKIE = "clawplane_ui"
TTL_S = 12 * 3600
MAX_SESSIONS = 256
MAX_PER_CONSUMER = 32


@dataclass(frozen=True, slots=True)
class Session:
    """One login: who, with which scopes, and the CSRF token its forms must carry."""

    consumer: str
    scopes: frozenset[str]
    csrf: str
    token_digest: str
    expires: float

    def may(self, scope: str) -> bool:
        """Whether the login's token has ``scope``."""
        return scope in self.scopes

    def csrf_ok(self, presented: str) -> bool:
        """Whether a form's CSRF field is this session's (constant-time)."""
        return hmac.compare_digest(presented.encode(), self.csrf.encode())


def _sid_digest(sid: str) -> str:
    return hashlib.sha256(sid.encode("utf-8")).hexdigest()


class Sessions:
    """Open sessions by the digest of their id (see the module docstring)."""

    def __init__(self, tokens: TokenTable) -> None:
        self._tokens = tokens
        self._open: OrderedDict[str, Session] = OrderedDict()

    def open(self, token: str) -> tuple[str, Session] | Principal | None:
        """Log in: ``(session id, session)``; the principal when it lacks ``read``; None: unknown token."""
        principal = self._tokens.authenticate(token.strip())
        if principal is None:
            return None
        if "read" not in principal.scopes:
            return principal
        sid = secrets.token_urlsafe(32)
        session = Session(
            principal.consumer,
            principal.scopes,
            secrets.token_urlsafe(32),
            token_digest(token.strip()),
            time.monotonic() + TTL_S,
        )
        mine = [key for key, held in self._open.items() if held.consumer == session.consumer]
        for key in mine[: max(0, len(mine) + 1 - MAX_PER_CONSUMER)]:
            del self._open[key]  # its own least recently used logins, not anyone else's
        self._open[_sid_digest(sid)] = session
        while len(self._open) > MAX_SESSIONS:
            self._open.popitem(last=False)
        return sid, session

    def get(self, sid: str | None) -> Session | None:
        """The live session of cookie value ``sid`` (None: none, expired, or its token is gone)."""
        if not sid:
            return None
        key = _sid_digest(sid)
        session = self._open.get(key)
        if session is None:
            return None
        holder = self._tokens.holder(session.token_digest)
        if session.expires < time.monotonic() or holder is None or "read" not in holder.scopes:
            del self._open[key]
            return None
        self._open.move_to_end(key)  # recently used: the last to make room
        # Scopes are the token's now, not what it had at login.
        return replace(session, scopes=holder.scopes)

    def close(self, sid: str | None) -> None:
        """Log out."""
        if sid:
            self._open.pop(_sid_digest(sid), None)
