"""What ``clawplane k8s run`` is given, checked and turned into settings (light: no kopf, no engine).

The command line is the CLI's (``cli/k8s.py``); the checks and the defaults that depend on the
pod's environment live here, beside the operator they configure.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawplane import __version__
from clawplane.k8s.admission.settings import Target, WebhookOptions
from clawplane.k8s.ha import DEFAULT_LEASE_NAME

if TYPE_CHECKING:
    from clawplane.k8s.ha.election import ElectionSettings

__all__ = [
    "DEFAULT_IMAGE",
    "DEFAULT_LEASE_NAME",
    "GATEWAY_PODS",
    "OptionsError",
    "WebhookArgs",
    "default_ingress",
    "election_settings",
    "ingress",
    "namespace_selector",
    "webhook_options",
]

DEFAULT_IMAGE = f"ghcr.io/clawplane/clawplane:{__version__}"
GATEWAY_PODS: dict[str, object] = {
    "podSelector": {"matchExpressions": [{"key": "clawplane.dev/gateway", "operator": "Exists"}]}
}
"""The default peer of a bridge pod's NetworkPolicy: pods labelled ``clawplane.dev/gateway`` (any value)."""


class OptionsError(ValueError):
    """Options that do not go together or do not parse; the message names them and the fix."""


def default_ingress() -> list[dict[str, object]]:
    """Gateway pods in the server's namespace, and the operator's own pods (for tool discovery)."""
    peers: list[dict[str, object]] = [GATEWAY_PODS]
    namespace = os.environ.get("POD_NAMESPACE")
    if namespace:
        peers.append(
            {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                "podSelector": {"matchLabels": {"app.kubernetes.io/component": "operator"}},
            }
        )
    return peers


def ingress(text: str | None) -> list[dict[str, object]]:
    """``--bridge-ingress-from``: a JSON list of NetworkPolicy peers, ``none``, or unset (the default)."""
    if text is None:
        return default_ingress()
    if text.strip().lower() == "none":
        return []
    try:
        peers = json.loads(text)
    except ValueError as exc:
        raise OptionsError(f"--bridge-ingress-from is not JSON ({exc}); give a list") from None
    if not isinstance(peers, list) or not all(isinstance(p, dict) and p for p in peers):
        raise OptionsError("--bridge-ingress-from must be a JSON list of NetworkPolicy peers")
    return peers


def namespace_selector(selector: str | None, namespaces: list[str]) -> str | None:
    """``--namespace-selector``, checked against ``-n``."""
    if selector is not None and namespaces:
        raise OptionsError("--namespace-selector chooses among all namespaces; drop -n")
    if selector is not None and not selector.strip():
        raise OptionsError("--namespace-selector is empty; give a selector such as shard=a")
    return selector


@dataclass(frozen=True)
class WebhookArgs:
    """The ``--webhook-*`` options as given."""

    port: int
    bind: str
    service: str | None
    url: str | None
    service_port: int
    configuration: str
    secret: str
    failure_policy: str
    timeout: int


def webhook_options(args: WebhookArgs) -> WebhookOptions | None:
    """The admission webhook's settings (None: ``--webhook-port`` 0, off)."""
    if not args.port:
        return None
    if not args.service and not args.url:
        raise OptionsError("--webhook-port needs --webhook-service (in a cluster) or --webhook-url.")
    if args.url and not args.url.startswith("https://"):
        raise OptionsError("--webhook-url must be https:// (webhooks are called over TLS)")
    if not 1 <= args.timeout <= 30:
        raise OptionsError("--webhook-timeout must be between 1 and 30 seconds")
    return WebhookOptions(
        port=args.port,
        bind=args.bind,
        target=Target(url=args.url, service=args.service, port=args.service_port),
        configuration=args.configuration,
        secret=args.secret,
        failure_policy=args.failure_policy,
        timeout_seconds=args.timeout,
    )


def election_settings(
    enabled: bool,
    namespace: str,
    name: str,
    lease_duration: float,
    renew_deadline: float,
    retry_period: float,
) -> ElectionSettings | None:
    """Leader election's settings (None: ``--no-leader-elect``)."""
    if not enabled:
        return None
    from clawplane.k8s.ha.election import ElectionError, ElectionSettings

    try:
        return ElectionSettings(
            namespace=namespace,
            identity=f"{socket.gethostname()}_{uuid.uuid4().hex[:12]}",
            name=name,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
        )
    except ElectionError as exc:
        raise OptionsError(str(exc)) from None
