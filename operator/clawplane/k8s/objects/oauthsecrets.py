"""OAuth logins of ``auth: oauth`` McpServers, one Secret per server (``clawplane-oauth-<server>``).

``clawplane login --kubernetes`` writes the Secret (``k8s.oauthlogin``); the operator reads it
when it probes the server and writes refreshed tokens back. The Secret holds what the local
sealed store keeps (``state.oauth``), one data key per part: ``tokens.json``, ``expires-at.json``,
``client.json``, ``resource-metadata.json``, ``server-metadata.json``, and ``url`` (a login
for another URL is never presented). Kubernetes encrypts Secrets at rest as the cluster is
configured to. The McpServer owns the Secret, so deleting the server deletes its login.

A write-back is conditional on the resourceVersion read at the start of the session: a 409
means someone logged in again meanwhile, a 404 that someone logged out; either way the newer
state stays and is re-read. Nothing here logs a token: messages name the Secret only.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import shlex
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio

from clawplane.k8s.api.kubeapi import SECRETS, ApiError, KubeApi
from clawplane.k8s.objects.children import MANAGED_BY, Owner, dns_label
from clawplane.k8s.objects.secretrefs import SecretReader
from clawplane.models import McpServerSpec, ValueFrom
from clawplane.runtimes.oauth import CredentialRows
from clawplane.state import Credential

__all__ = [
    "SecretCredentials",
    "SecretRows",
    "login_secret_names",
    "oauth_secret_name",
    "oauth_servers",
    "with_header_secrets",
    "with_oauth_secrets",
]

log = logging.getLogger(__name__)
COMPONENT = {"app.kubernetes.io/component": "oauth-login"}
SERVER_ANNOTATION = "clawplane.dev/mcpserver"
WRITE_BACK_SECONDS = 10.0


def oauth_secret_name(server: str) -> str:
    """The Secret that holds ``server``'s OAuth login."""
    return dns_label("clawplane-oauth", server)


def _decode(obj: dict[str, Any], server: str) -> Credential | None:
    data = {k: base64.b64decode(v).decode() for k, v in (obj.get("data") or {}).items()}
    url = data.pop("url", None)
    if url is None:
        return None
    doc = {
        k.removesuffix(".json").replace("-", "_"): json.loads(v)
        for k, v in data.items()
        if k.endswith(".json")
    }
    expires = doc.get("expires_at")
    version = str((obj.get("metadata") or {}).get("resourceVersion") or "").encode()
    return Credential(server, url, doc, float(expires) if expires is not None else None, version)


def _encode(url: str, document: dict[str, Any]) -> dict[str, str]:
    data = {"url": url, **{f"{k.replace('_', '-')}.json": json.dumps(v) for k, v in document.items()}}
    return {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}


class SecretRows:
    """One server's login Secret as ``CredentialRows``: read once, written back on ``flush``."""

    def __init__(self, api: KubeApi, namespace: str, server: str) -> None:
        self.api = api
        self.namespace = namespace
        self.server = server
        self.name = oauth_secret_name(server)
        self._obj: dict[str, Any] | None = None
        self._current: Credential | None = None
        self._dirty = False
        self.superseded = False
        """Set when a write-back found a newer login (409) or a logout (404) and kept it."""

    async def load(self) -> Credential | None:
        """Read the Secret (None when there is none)."""
        self._obj = await self.api.get(SECRETS, self.namespace, self.name)
        self._current = _decode(self._obj, self.server) if self._obj is not None else None
        self._dirty = False
        return self._current

    def get(self, server: str) -> Credential | None:
        """The credential as read (or as written since, before ``flush``)."""
        return self._current if server == self.server else None

    def put(self, server: str, url: str, document: dict[str, Any], *, expires_at: float | None) -> bytes:
        """Hold ``document`` for the next ``flush``; a fresh version."""
        version = os.urandom(8)
        self._current = Credential(server, url, dict(document), expires_at, version)
        self._dirty = True
        return version

    def delete(self, server: str) -> bool:
        """Not used by a session; ``remove`` deletes the Secret."""
        had = self._current is not None
        self._current = None
        return had

    async def flush(self, *, owner: Owner | None = None) -> bool:
        """Write what changed; True when written.

        With ``owner`` (a login): create or replace whatever is there. Without (the operator's
        write-back of refreshed tokens): only replace the Secret as it was read, never a newer one.
        """
        if not self._dirty or self._current is None:
            return False
        data = _encode(self._current.url, self._current.document)
        if owner is not None:
            meta = {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {**MANAGED_BY, **COMPONENT},
                "annotations": {SERVER_ANNOTATION: self.server},
                "ownerReferences": [owner.reference()],
            }
            wanted = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": meta, "data": data}
            self._obj = await self.api.update(SECRETS, self.namespace, self.name, lambda _: dict(wanted))
            self._dirty = False
            return True
        if self._obj is None:
            return False  # nobody logged in: the operator never creates a login
        wanted = {**self._obj, "data": data}
        try:
            self._obj = await self.api.replace(SECRETS, self.namespace, wanted)
        except ApiError as exc:
            if exc.status not in (404, 409):
                raise
            self.superseded = True
            log.info(
                "%s: Secret %s changed since it was read (%s); kept the newer login",
                self.namespace,
                self.name,
                exc.reason,
            )
            await self.load()
            return False
        self._dirty = False
        return True

    async def remove(self) -> bool:
        """Delete the Secret; False when there was none."""
        return await self.api.delete(SECRETS, self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class SecretCredentials:
    """The operator's credential source for one namespace: each server's login Secret."""

    api: KubeApi
    namespace: str

    @contextlib.asynccontextmanager
    async def open(self, server: str) -> AsyncIterator[CredentialRows | None]:
        """The server's login for one session; refreshed tokens are written back when it ends."""
        rows = SecretRows(self.api, self.namespace, server)
        try:
            await rows.load()
        except ApiError as exc:
            log.warning("%s: cannot read Secret %s: %s", self.namespace, rows.name, exc.reason)
            yield None
            return
        try:
            yield rows
        finally:
            # The session usually ends by cancellation (the probe stops it): shielded, bounded.
            with anyio.move_on_after(WRITE_BACK_SECONDS, shield=True) as scope:
                try:
                    await rows.flush()
                except ApiError as exc:
                    log.warning("%s: cannot write Secret %s back: %s", self.namespace, rows.name, exc.reason)
            if scope.cancelled_caught:
                log.warning("%s: writing Secret %s back timed out", self.namespace, rows.name)

    def login_command(self, server: str) -> str:
        """``clawplane login --kubernetes NAMESPACE SERVER``."""
        return f"clawplane login --kubernetes {shlex.quote(self.namespace)} {shlex.quote(server)}"


def oauth_servers(live: list[dict[str, Any]]) -> list[str]:
    """The ``auth: oauth`` McpServers among ``live`` custom resources."""
    return [
        cr["metadata"]["name"]
        for cr in live
        if cr.get("kind") == "McpServer" and (cr.get("spec") or {}).get("auth") == "oauth"
    ]


def login_secret_names(live: list[dict[str, Any]]) -> set[str]:
    """The login Secrets of the ``auth: oauth`` McpServers among ``live``: their events wake the namespace.

    An OAuth server waiting on a login is settled (``LoginRequired`` is not retried on a timer);
    the Secret ``clawplane login --kubernetes`` writes is what starts the next pass.
    """
    return {oauth_secret_name(name) for name in oauth_servers(live)}


async def _value(reader: SecretReader, value: Any) -> Any:
    ref = value.value_from.secret_key_ref if isinstance(value, ValueFrom) else None
    return await reader.value(ref.name, ref.key) if ref is not None else value


async def with_header_secrets(reader: SecretReader, spec: McpServerSpec) -> McpServerSpec:
    """``spec`` with its headers' ``secretKeyRef`` values read (raises ``LookupError`` for a missing one)."""
    headers = {k: await _value(reader, v) for k, v in spec.headers.items()}
    return spec.model_copy(update={"headers": headers})


async def with_oauth_secrets(reader: SecretReader, spec: McpServerSpec) -> McpServerSpec:
    """``spec`` with its pre-registered OAuth client's ``secretKeyRef`` values (id, secret) read."""
    if spec.oauth is None:
        return spec
    client = {
        "client_id": await _value(reader, spec.oauth.client_id),
        "client_secret": await _value(reader, spec.oauth.client_secret),
    }
    return spec.model_copy(update={"oauth": spec.oauth.model_copy(update=client)})
