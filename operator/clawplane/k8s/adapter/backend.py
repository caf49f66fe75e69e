"""``RuntimeBackend`` for one namespace: hosted servers are Deployments, tools come over the Service.

``ensure`` converges a server's Deployment and Service every pass (level-based, through
``ChildWriter``: drift is written back, foreign objects are never touched), then discovers
tools by connecting to the Service once the Deployment has a ready replica of the current
template. Consumer-hosted and remote
servers are probed from the operator process, with Secret references resolved in memory.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from secrets import token_urlsafe
from typing import Any

from clawplane.k8s.api.kubeapi import DEPLOYMENTS, NETWORK_POLICIES, PODS, SECRETS, SERVICES, Kind, KubeApi
from clawplane.k8s.objects.bridgeobserve import BridgeObservability
from clawplane.k8s.objects.children import (
    CONFIG_HASH,
    SERVER_LABEL,
    TOKEN_KEY,
    Owner,
    UnsupportedInClusterError,
    peers_service_name,
    server_child_name,
    server_deployment,
    server_network_policy,
    server_peers_service,
    server_service,
    server_token_secret,
    service_url,
    token_secret_name,
)
from clawplane.k8s.objects.converge import ChildProblem, ChildWriter
from clawplane.k8s.objects.oauthsecrets import with_oauth_secrets
from clawplane.k8s.objects.secretrefs import SecretReader
from clawplane.models import McpServerSpec, Transport, ValueFrom
from clawplane.reconcile.backend import RuntimeReport
from clawplane.reconcile.localbackend import probe_once
from clawplane.runtimes import RuntimeSettings
from clawplane.secrets import ResolvedSecrets

MIN_TOKEN_CHARS = 32


@dataclass
class KubeBackend:
    """Runs one namespace's servers as Kubernetes workloads."""

    api: KubeApi
    namespace: str
    image: str
    writer: ChildWriter
    settings: RuntimeSettings = field(default_factory=RuntimeSettings)
    routes: Callable[[str], str | None] | None = None
    """Test hook: maps an in-cluster URL to one this process can reach (readiness is still required)."""
    owners: dict[str, Owner] = field(default_factory=dict)
    secrets: SecretReader | None = None
    ingress_from: list[dict[str, Any]] = field(default_factory=list)
    """NetworkPolicy peers allowed to reach a bridge pod (gateway pods, the operator); empty: no policy."""
    problems: dict[str, ChildProblem] = field(default_factory=dict)
    """Children of a server the API server refused, or foreign objects in their way (this pass)."""
    observe: BridgeObservability = field(default_factory=BridgeObservability)
    """The namespace Gateway's traces and audit settings, as every bridge pod is given them (this pass)."""
    _reports: dict[str, tuple[tuple[Any, ...], RuntimeReport]] = field(default_factory=dict)
    _seen: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    _pods: list[dict[str, Any]] = field(default_factory=list)

    async def ensure(
        self,
        name: str,
        spec: McpServerSpec,
        *,
        safe_name: str,
        config_hash: str,
        base_dir: Path,
        resolved: ResolvedSecrets | None = None,  # the pod resolves its own references
    ) -> RuntimeReport:
        """Converge the Deployment and Service, then discover tools through the Service once it is ready.

        Runs every pass (``report`` never answers for a hosted server), so drift is repaired
        level-based; tools are listed again only when the pod behind the Service changed.
        """
        # A settled server needs no I/O here, so a pass over hundreds of them would hold the event
        # loop to the end: kopf, the watches and the leader Lease renewal get their turn per server.
        await asyncio.sleep(0)
        owner = self.owners[name]
        token = self._token(name)
        try:
            deployment = server_deployment(
                name,
                self.namespace,
                spec,
                owner=owner,
                image=self.image,
                config_hash=config_hash,
                token_hash=_digest(token),
                observe=self.observe,
            )
        except UnsupportedInClusterError as exc:
            return RuntimeReport(phase="failed", last_error=str(exc))
        try:
            secret = server_token_secret(name, self.namespace, token, owner=owner)
            await self._converge(SECRETS, secret, owner)
            current = await self._converge(DEPLOYMENTS, deployment, owner)
            await self._converge(
                SERVICES, server_service(name, self.namespace, owner=owner, spec=spec), owner
            )
            await self._peers_service(name, spec, owner)
            await self._network_policy(name, owner, spec.replicas)
        except ChildProblem as problem:
            self.problems[name] = problem
            await self.writer.rejected_event(owner, problem)
            self._reports.pop(name, None)
            return RuntimeReport(phase="failed", last_error=problem.message)
        endpoint = service_url(name, self.namespace)
        restarts = self._restarts(name)
        if not _available(current):
            self._reports.pop(name, None)
            return RuntimeReport(
                phase="starting",
                restarts=restarts,
                endpoint=endpoint,
                last_error="waiting for the server's pod to become ready",
            )
        pod = _pod_identity(current, restarts)
        cached = self._reports.get(name)
        if cached is not None and cached[0] == pod:
            return cached[1]
        remote = McpServerSpec(
            transport=Transport.STREAMABLE_HTTP,
            url=self._route(endpoint),
            connection_timeout_ms=spec.connection_timeout_ms,
            request_timeout_ms=spec.request_timeout_ms,
            tool_filter=spec.tool_filter,
            headers={"Authorization": f"Bearer {token}"},
        )
        found = replace(
            await probe_once(name, remote, safe_name=safe_name, base_dir=base_dir, settings=self.settings),
            endpoint=endpoint,
            restarts=restarts,
        )
        if found.phase == "ready":
            self._reports[name] = (pod, found)
        return found

    async def probe(
        self,
        name: str,
        spec: McpServerSpec,
        *,
        safe_name: str,
        base_dir: Path,
        resolved: ResolvedSecrets | None = None,  # Secrets are read from the API below
    ) -> RuntimeReport:
        """Probe from the operator (remote or consumer-hosted servers), secrets resolved in memory."""
        try:
            with_secrets = await self._with_secrets(spec)
        except LookupError as exc:
            return RuntimeReport(phase="failed", last_error=str(exc))
        if with_secrets.url is not None:
            with_secrets = with_secrets.model_copy(update={"url": self._route(with_secrets.url)})
        return await probe_once(
            name, with_secrets, safe_name=safe_name, base_dir=base_dir, settings=self.settings
        )

    async def remove(self, name: str) -> None:
        """Delete the server's Deployment and Service if they are clawplane's (a foreign object stays)."""
        self._reports.pop(name, None)
        child = server_child_name(name)
        for seen in self._seen.values():
            seen.pop(child, None)
        owner = self.owners.get(name) or Owner("McpServer", name, "")
        for kind in (DEPLOYMENTS, SERVICES, NETWORK_POLICIES):
            await self.writer.delete(kind, child, owner)
        if peers_service_name(name) in (self._seen.get(SERVICES.plural) or {}):
            await self.writer.delete(SERVICES, peers_service_name(name), owner)
        await self.writer.delete(SECRETS, token_secret_name(name), owner)

    def report(self, name: str) -> RuntimeReport | None:
        """Always None: a hosted server's children are converged every pass (see ``ensure``)."""
        return None

    def _route(self, url: str) -> str:
        routed = self.routes(url) if self.routes is not None else None
        return routed or url

    async def begin_pass(self) -> None:
        """Read the namespace's managed workloads once (from the watches' cache), not once per server."""
        self.problems = {}
        for kind in (DEPLOYMENTS, SERVICES, SECRETS, NETWORK_POLICIES):
            found = await self.writer.existing(kind, label=SERVER_LABEL)
            self._seen[kind.plural] = {o["metadata"]["name"]: o for o in found}
        self._pods = await self.writer.existing(PODS, label=SERVER_LABEL)

    async def _converge(self, kind: Kind, wanted: dict[str, Any], owner: Owner) -> dict[str, Any]:
        name = wanted["metadata"]["name"]
        seen = self._seen.get(kind.plural)
        current = seen.get(name) if seen is not None else await self.api.get(kind, self.namespace, name)
        return await self.writer.converge(kind, wanted, current, owner)

    def _token(self, name: str) -> str:
        """The bridge's token: the one in its Secret when that is ours and intact, else a new one."""
        current = (self._seen.get(SECRETS.plural) or {}).get(token_secret_name(name))
        data = (current or {}).get("data") or {}
        try:
            token = base64.b64decode(data.get(TOKEN_KEY, ""), validate=True).decode("ascii")
        except (binascii.Error, UnicodeDecodeError):
            token = ""
        owned = current is not None and any(
            r.get("kind") == "McpServer" and r.get("name") == name
            for r in current["metadata"].get("ownerReferences") or []
        )
        if not (owned and len(token) >= MIN_TOKEN_CHARS and token.isprintable() and " " not in token):
            token = token_urlsafe(32)
        if self.secrets is not None:
            self.secrets.values_read.add(token)  # redacted wherever a message could echo it
        return token

    async def _peers_service(self, name: str, spec: McpServerSpec, owner: Owner) -> None:
        peers = peers_service_name(name)
        if spec.replicas > 1:
            await self._converge(SERVICES, server_peers_service(name, self.namespace, owner=owner), owner)
        elif peers in (self._seen.get(SERVICES.plural) or {}):
            await self.writer.delete(SERVICES, peers, owner)

    async def _network_policy(self, name: str, owner: Owner, replicas: int = 1) -> None:
        child = server_child_name(name)
        if self.ingress_from:
            policy = server_network_policy(
                name, self.namespace, self.ingress_from, owner=owner, replicas=replicas
            )
            await self._converge(NETWORK_POLICIES, policy, owner)
        elif child in (self._seen.get(NETWORK_POLICIES.plural) or {}):
            await self.writer.delete(NETWORK_POLICIES, child, owner)

    def _restarts(self, name: str) -> int:
        child = server_child_name(name)
        return sum(
            int(c.get("restartCount", 0))
            for pod in self._pods
            if (pod["metadata"].get("labels") or {}).get(SERVER_LABEL) == child
            for c in (pod.get("status") or {}).get("containerStatuses") or []
        )

    async def _with_secrets(self, spec: McpServerSpec) -> McpServerSpec:
        updates: dict[str, dict[str, Any]] = {}
        for attr in ("env", "headers"):
            values: dict[str, Any] = dict(getattr(spec, attr))
            for key, value in values.items():
                ref = value.value_from.secret_key_ref if isinstance(value, ValueFrom) else None
                if ref is not None:
                    reader = self.secrets or SecretReader(self.api, self.namespace)
                    values[key] = await reader.value(ref.name, ref.key)
            updates[attr] = values
        # A pre-registered OAuth client's id and secret, for the refresh (k8s.oauthsecrets).
        reader = self.secrets or SecretReader(self.api, self.namespace)
        return await with_oauth_secrets(reader, spec.model_copy(update=updates))


def _digest(token: str) -> str:
    return hashlib.sha256(f"clawplane/v1/bridge-token\0{token}".encode()).hexdigest()[:16]


def _pod_identity(deployment: dict[str, Any], restarts: int) -> tuple[Any, ...]:
    """What makes a new server process: another Deployment, another template, a restart."""
    meta = deployment.get("metadata") or {}
    template = (deployment.get("spec") or {}).get("template") or {}
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    return (meta.get("uid"), annotations.get(CONFIG_HASH), restarts)


def _available(deployment: dict[str, Any] | None) -> bool:
    """A ready replica of the current template (an old pod mid-rollout does not count)."""
    if deployment is None:
        return False
    status = deployment.get("status") or {}
    generation = int(deployment.get("metadata", {}).get("generation") or 0)
    current = int(status.get("observedGeneration") or 0) >= generation
    return (
        current
        and int(status.get("updatedReplicas") or 0) >= 1
        and int(status.get("readyReplicas") or 0) >= 1
    )
