"""The webhook's TLS material in a Secret of the operator's namespace, shared by every replica.

Every replica serves the webhook, so all must present certificates of the CA the configuration
trusts: the first to start creates the Secret, the others read it. Renewal is a replace guarded by
the resourceVersion; a replica that loses the race (409) takes what the winner wrote.
"""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

from clawplane.k8s.admission.certs import TlsMaterial, renewed
from clawplane.k8s.api.kubeapi import SECRETS, ApiError, KubeApi

_KEYS = {
    "ca_cert": "ca.crt",
    "ca_key": "ca.key",
    "cert": "tls.crt",
    "key": "tls.key",
    "previous_ca": "ca-previous.crt",
}
RACE_RETRIES = 3
MANAGED_BY = {"app.kubernetes.io/managed-by": "clawplane-operator"}


def _decode(secret: dict[str, Any] | None) -> TlsMaterial | None:
    data = (secret or {}).get("data") or {}
    try:
        fields = {attr: base64.b64decode(data.get(key, ""), validate=True) for attr, key in _KEYS.items()}
    except ValueError:
        return None
    if not all(fields[a] for a in ("ca_cert", "ca_key", "cert", "key")):
        return None
    return TlsMaterial(**fields)


def _encode(material: TlsMaterial) -> dict[str, str]:
    return {
        key: base64.b64encode(getattr(material, attr)).decode("ascii")
        for attr, key in _KEYS.items()
        if getattr(material, attr)
    }


async def current_material(
    api: KubeApi, namespace: str, name: str, names: set[str], now: datetime | None = None
) -> TlsMaterial:
    """The Secret's material, created or renewed first when it is missing, near its end or for other names."""
    for _ in range(RACE_RETRIES):
        secret = await api.get(SECRETS, namespace, name)
        found = _decode(secret)
        fresh = renewed(found, names, now)
        if fresh is None:
            assert found is not None
            return found
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)},
            "data": _encode(fresh),
        }
        try:
            if secret is None:
                await api.create(SECRETS, namespace, body)
            else:
                body["metadata"]["resourceVersion"] = secret["metadata"].get("resourceVersion")
                body["metadata"]["labels"] = {**(secret["metadata"].get("labels") or {}), **MANAGED_BY}
                await api.replace(SECRETS, namespace, body)
        except ApiError as exc:
            if exc.status != 409:  # 409: another replica wrote first; read what it wrote
                raise
            continue
        return fresh
    raise ApiError(409, "Conflict", f"Secret {namespace}/{name} kept changing while its certificate renewed")
