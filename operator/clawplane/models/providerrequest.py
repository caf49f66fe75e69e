"""How a ModelProvider's HTTP requests are shaped: ``spec.request`` (headers, auth, proxy, TLS).

Credentials and TLS material may be ``valueFrom`` references; each ``auth``/``proxy`` mode takes
exactly its own fields, as OpenClaw's strict unions do.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from clawplane.models.base import Model, NonEmptyStr
from clawplane.models.values import SecretValue

__all__ = ["ProviderRequest", "ProviderTls", "RequestAuth", "RequestProxy"]


class ProviderTls(Model):
    """TLS settings for the provider's connections."""

    ca: SecretValue | None = None
    """CA certificate(s), PEM."""
    cert: SecretValue | None = None
    """Client certificate, PEM."""
    key: SecretValue | None = None
    """Client key, PEM."""
    passphrase: SecretValue | None = None
    """Passphrase of the client key."""
    server_name: str | None = None
    """Server name to verify (SNI)."""
    insecure_skip_verify: bool | None = None
    """Do not verify the server's certificate."""


class RequestAuth(Model):
    """How credentials are sent: ``provider-default``, ``authorization-bearer`` (``token``) or ``header``."""

    mode: Literal["provider-default", "authorization-bearer", "header"]
    """Auth strategy."""
    token: SecretValue | None = None
    """Bearer token (``authorization-bearer``)."""
    header_name: NonEmptyStr | None = None
    """Header to send (``header``)."""
    value: SecretValue | None = None
    """Header value (``header``)."""
    prefix: str | None = None
    """Text before the value (``header``), e.g. ``"Token "``."""

    @model_validator(mode="after")
    def _fields_of_mode(self) -> RequestAuth:
        """Each mode takes exactly its own fields, as OpenClaw's strict union does."""
        allowed = {
            "provider-default": set(),
            "authorization-bearer": {"token"},
            "header": {"header_name", "value", "prefix"},
        }[self.mode]
        given = {f for f in ("token", "header_name", "value", "prefix") if getattr(self, f) is not None}
        extra = sorted(given - allowed)
        if extra:
            raise ValueError(f"request.auth mode {self.mode!r} takes no {', '.join(extra)}")
        if self.mode == "authorization-bearer" and self.token is None:
            raise ValueError('request.auth mode "authorization-bearer" requires token')
        if self.mode == "header" and (self.header_name is None or self.value is None):
            raise ValueError('request.auth mode "header" requires headerName and value')
        return self


class RequestProxy(Model):
    """An HTTP proxy: ``env-proxy`` (HTTP_PROXY/HTTPS_PROXY) or ``explicit-proxy`` (``url``)."""

    mode: Literal["env-proxy", "explicit-proxy"]
    """Proxy strategy."""
    url: NonEmptyStr | None = None
    """Proxy URL (``explicit-proxy``)."""
    tls: ProviderTls | None = None
    """TLS settings towards the proxy."""

    @model_validator(mode="after")
    def _url_of_mode(self) -> RequestProxy:
        """``url`` belongs to ``explicit-proxy`` only, and is required there."""
        if self.mode == "explicit-proxy" and self.url is None:
            raise ValueError('request.proxy mode "explicit-proxy" requires url')
        if self.mode == "env-proxy" and self.url is not None:
            raise ValueError('request.proxy mode "env-proxy" takes no url')
        return self


class ProviderRequest(Model):
    """Transport overrides for the provider's HTTP requests."""

    headers: dict[str, SecretValue] = Field(default_factory=dict)
    """Extra headers, merged with the provider's defaults."""
    auth: RequestAuth | None = None
    """Auth strategy override."""
    proxy: RequestProxy | None = None
    """HTTP proxy override."""
    tls: ProviderTls | None = None
    """TLS override for direct connections."""
    allow_private_network: bool | None = None
    """Allow requests to private, CGNAT and similar ranges."""
