"""How the webhook is reached and what it serves: plain settings, light to import (``k8s/options.py``)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

PATH = "/validate"


@dataclass(frozen=True)
class Target:
    """Where the API server reaches the webhook: a Service (in a cluster) or a URL."""

    url: str | None = None
    service: str | None = None
    namespace: str = ""
    port: int = 443

    def client_config(self, ca_bundle: bytes) -> dict[str, Any]:
        """The webhook's ``clientConfig``."""
        config: dict[str, Any] = {"caBundle": base64.b64encode(ca_bundle).decode("ascii")}
        if self.service:
            config["service"] = {
                "namespace": self.namespace,
                "name": self.service,
                "port": self.port,
                "path": PATH,
            }
        else:
            assert self.url is not None
            config["url"] = self.url.rstrip("/") + PATH
        return config


@dataclass(frozen=True)
class WebhookOptions:
    """``--webhook-*``: where the webhook listens, how the API server reaches it, its policy."""

    port: int
    bind: str = "127.0.0.1"
    target: Target = field(default_factory=Target)
    configuration: str = "clawplane"
    secret: str = "clawplane-webhook-tls"
    namespace: str = ""
    """Where the Secret lives (empty: the operator's own namespace)."""
    failure_policy: str = "Ignore"
    timeout_seconds: int = 5
    namespaces: tuple[str, ...] = ()
    selector: str | None = None
    recheck_seconds: float = 3600.0

    def names(self) -> set[str]:
        """The names the serving certificate carries: the Service's DNS names, or the URL's host."""
        if self.target.service:
            svc, ns = self.target.service, self.target.namespace
            return {svc, f"{svc}.{ns}", f"{svc}.{ns}.svc", f"{svc}.{ns}.svc.cluster.local"}
        host = urlsplit(self.target.url or "").hostname
        return {host} if host else {"localhost"}
