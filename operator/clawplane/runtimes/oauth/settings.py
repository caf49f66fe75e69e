"""A server's OAuth settings as a session uses them (no SDK imported)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OAuthSettings"]


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    """A server's OAuth settings, secrets resolved (``McpServer.spec.oauth``)."""

    scope: str | None = None
    client_metadata_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    redirect_url: str | None = None
    """The redirect URL registered for ``clawplane login`` (else a loopback one on a free port)."""
    per_requester: bool = False
    """``identity: per-requester``: each sender logs in through OpenClaw; clawplane only discovers."""
