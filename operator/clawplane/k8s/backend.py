"""``RuntimeBackend`` for one namespace: hosted servers are Deployments, tools come over the Service.

``ensure`` writes a server's Deployment and Service only when their spec hash changed
(so a restarted operator does no duplicate work), then discovers tools by connecting
to the Service once the Deployment has a ready replica. Consumer-hosted and remote
servers are probed from the operator process, with Secret references resolved in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from clawplane.k8s.children import (
    SERVER_LABEL,
    Owner,
    UnsupportedInClusterError,
    server_child_name,
    server_deployment,
    server_service,
    service_url,
)
from clawplane.k8s.converge import converge
from clawplane.k8s.kubeapi import DEPLOYMENTS, PODS, SERVICES, Kind, KubeApi
from clawplane.k8s.secretrefs import SecretReader
from clawplane.models import McpServerSpec, Transport, ValueFrom
from clawplane.reconcile.backend import RuntimeReport
from clawplane.reconcile.localbackend import probe_once
from clawplane.runtimes import RuntimeSettings


@dataclass
class KubeBackend:
    """Runs one namespace's servers as Kubernetes workloads."""

    api: KubeApi
    namespace: str
    image: str
    settings: RuntimeSettings = field(default_factory=RuntimeSettings)
    routes: Callable[[str], str | None] | None = None
    """Test hook: maps an in-cluster URL to one this process can reach (readiness is still required)."""
    owners: dict[str, Owner] = field(default_factory=dict)
    secrets: SecretReader | None = None
    _reports: dict[str, RuntimeReport] = field(default_factory=dict)
    _seen: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    _pods: list[dict[str, Any]] = field(default_factory=list)

    async def ensure(
        self, name: str, spec: McpServerSpec, *, safe_name: str, config_hash: str, base_dir: Path
    ) -> RuntimeReport:
        """Write the Deployment and Service if they differ, then discover tools through the Service."""
        owner = self.owners[name]
        try:
            deployment = server_deployment(
                name, self.namespace, spec, owner=owner, image=self.image, config_hash=config_hash
            )
        except UnsupportedInClusterError as exc:
            return self._remember(name, RuntimeReport(phase="failed", last_error=str(exc)))
        current = await self._converge(DEPLOYMENTS, deployment)
        await self._converge(SERVICES, server_service(name, self.namespace, owner=owner))
        endpoint = service_url(name, self.namespace)
        restarts = self._restarts(name)
        if not _available(current):
            report = RuntimeReport(
                phase="starting",
                restarts=restarts,
                endpoint=endpoint,
                last_error="waiting for the server's pod to become ready",
            )
            return self._remember(name, report)
        remote = McpServerSpec(
            transport=Transport.STREAMABLE_HTTP,
            url=self._route(endpoint),
            connection_timeout_ms=spec.connection_timeout_ms,
            request_timeout_ms=spec.request_timeout_ms,
            tool_filter=spec.tool_filter,
        )
        found = await probe_once(name, remote, safe_name=safe_name, base_dir=base_dir, settings=self.settings)
        return self._remember(name, replace(found, endpoint=endpoint, restarts=restarts))

    async def probe(self, name: str, spec: McpServerSpec, *, safe_name: str, base_dir: Path) -> RuntimeReport:
        """Probe from the operator (remote or consumer-hosted servers), secrets resolved in memory."""
        try:
            resolved = await self._with_secrets(spec)
        except LookupError as exc:
            return RuntimeReport(phase="failed", last_error=str(exc))
        if resolved.url is not None:
            resolved = resolved.model_copy(update={"url": self._route(resolved.url)})
        return await probe_once(
            name, resolved, safe_name=safe_name, base_dir=base_dir, settings=self.settings
        )

    async def remove(self, name: str) -> None:
        """Delete the server's Deployment and Service (missing ones are fine)."""
        self._reports.pop(name, None)
        child = server_child_name(name)
        for seen in self._seen.values():
            seen.pop(child, None)
        await self.api.delete(DEPLOYMENTS, self.namespace, child)
        await self.api.delete(SERVICES, self.namespace, child)

    def report(self, name: str) -> RuntimeReport | None:
        """The last ready report; None otherwise, so the engine checks a server again until it is ready."""
        report = self._reports.get(name)
        if report is None or report.phase != "ready":
            return None
        deployments = self._seen.get(DEPLOYMENTS.plural)
        if deployments is not None and server_child_name(name) not in deployments:
            return None  # its Deployment is gone (drift): the engine must ensure it again
        return report

    def _route(self, url: str) -> str:
        routed = self.routes(url) if self.routes is not None else None
        return routed or url

    def _remember(self, name: str, report: RuntimeReport) -> RuntimeReport:
        self._reports[name] = report
        return report

    async def begin_pass(self) -> None:
        """Read the namespace's managed workloads once, instead of once per server."""
        for kind in (DEPLOYMENTS, SERVICES):
            found = await self.api.list(kind, self.namespace, labels=SERVER_LABEL)
            self._seen[kind.plural] = {o["metadata"]["name"]: o for o in found}
        self._pods = await self.api.list(PODS, self.namespace, labels=SERVER_LABEL)

    async def _converge(self, kind: Kind, wanted: dict[str, Any]) -> dict[str, Any] | None:
        name = wanted["metadata"]["name"]
        seen = self._seen.get(kind.plural)
        current = seen.get(name) if seen is not None else await self.api.get(kind, self.namespace, name)
        return await converge(self.api, kind, self.namespace, wanted, current)

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
        return spec.model_copy(update=updates)


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
