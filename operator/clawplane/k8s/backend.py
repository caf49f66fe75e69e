"""``RuntimeBackend`` for one namespace: hosted servers are Deployments, tools come over the Service.

``ensure`` converges a server's Deployment and Service every pass (level-based, through
``ChildWriter``: drift is written back, foreign objects are never touched), then discovers
tools by connecting to the Service once the Deployment has a ready replica of the current
template. Consumer-hosted and remote
servers are probed from the operator process, with Secret references resolved in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from clawplane.k8s.children import (
    CONFIG_HASH,
    SERVER_LABEL,
    Owner,
    UnsupportedInClusterError,
    server_child_name,
    server_deployment,
    server_service,
    service_url,
)
from clawplane.k8s.converge import ChildProblem, ChildWriter
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
    writer: ChildWriter
    settings: RuntimeSettings = field(default_factory=RuntimeSettings)
    routes: Callable[[str], str | None] | None = None
    """Test hook: maps an in-cluster URL to one this process can reach (readiness is still required)."""
    owners: dict[str, Owner] = field(default_factory=dict)
    secrets: SecretReader | None = None
    problems: dict[str, ChildProblem] = field(default_factory=dict)
    """Children of a server the API server refused, or foreign objects in their way (this pass)."""
    _reports: dict[str, tuple[tuple[Any, ...], RuntimeReport]] = field(default_factory=dict)
    _seen: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    _pods: list[dict[str, Any]] = field(default_factory=list)

    async def ensure(
        self, name: str, spec: McpServerSpec, *, safe_name: str, config_hash: str, base_dir: Path
    ) -> RuntimeReport:
        """Converge the Deployment and Service, then discover tools through the Service once it is ready.

        Runs every pass (``report`` never answers for a hosted server), so drift is repaired
        level-based; tools are listed again only when the pod behind the Service changed.
        """
        owner = self.owners[name]
        try:
            deployment = server_deployment(
                name, self.namespace, spec, owner=owner, image=self.image, config_hash=config_hash
            )
        except UnsupportedInClusterError as exc:
            return RuntimeReport(phase="failed", last_error=str(exc))
        try:
            current = await self._converge(DEPLOYMENTS, deployment, owner)
            await self._converge(SERVICES, server_service(name, self.namespace, owner=owner), owner)
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
        )
        found = replace(
            await probe_once(name, remote, safe_name=safe_name, base_dir=base_dir, settings=self.settings),
            endpoint=endpoint,
            restarts=restarts,
        )
        if found.phase == "ready":
            self._reports[name] = (pod, found)
        return found

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
        """Delete the server's Deployment and Service if they are clawplane's (a foreign object stays)."""
        self._reports.pop(name, None)
        child = server_child_name(name)
        for seen in self._seen.values():
            seen.pop(child, None)
        owner = self.owners.get(name) or Owner("McpServer", name, "")
        for kind in (DEPLOYMENTS, SERVICES):
            await self.writer.delete(kind, child, owner)

    def report(self, name: str) -> RuntimeReport | None:
        """Always None: a hosted server's children are converged every pass (see ``ensure``)."""
        return None

    def _route(self, url: str) -> str:
        routed = self.routes(url) if self.routes is not None else None
        return routed or url

    async def begin_pass(self) -> None:
        """Read the namespace's managed workloads once, instead of once per server."""
        self.problems = {}
        for kind in (DEPLOYMENTS, SERVICES):
            found = await self.api.list(kind, self.namespace, labels=SERVER_LABEL)
            self._seen[kind.plural] = {o["metadata"]["name"]: o for o in found}
        self._pods = await self.api.list(PODS, self.namespace, labels=SERVER_LABEL)

    async def _converge(self, kind: Kind, wanted: dict[str, Any], owner: Owner) -> dict[str, Any]:
        name = wanted["metadata"]["name"]
        seen = self._seen.get(kind.plural)
        current = seen.get(name) if seen is not None else await self.api.get(kind, self.namespace, name)
        return await self.writer.converge(kind, wanted, current, owner)

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
