"""The project's process kubelet (tests/k8s/kubelet.py) against the real API server.

There are no nodes here, and the controller manager's Deployment controller is off, so this
plays both parts for the Deployments clawplane manages in the given namespaces: it runs each
pod as a local process, creates the Pod object (owned by the Deployment, so the real garbage
collector removes it with its owner) and writes Pod and Deployment status through the real
``/status`` subresources, where the operator reads them. The pod is never bound to a node
(no scheduler): its ``spec.nodeName`` stays empty, which nothing in the operator looks at.

It reads through the API server (lists and gets, polled every ``POLL_S``: a real kubelet
watches, but the interval only bounds how soon a change is seen). A write the API server
refuses for a passing reason (the namespace's ServiceAccount not made yet, a 409, an object
deleted meanwhile) is retried at the next sync.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from pathlib import Path
from typing import Any

import kmock
from tests.k8s.kubelet import CONFIGMAPS, DEPLOYMENTS, PODS, SECRETS, SERVICES, Kubelet
from tests.k8s.real.client import ApiError, Kube

JSON = dict[str, Any]
POLL_S = 0.2
KINDS = {
    DEPLOYMENTS: ("apps/v1", "Deployment"),
    PODS: ("v1", "Pod"),
    SERVICES: ("v1", "Service"),
    SECRETS: ("v1", "Secret"),
    CONFIGMAPS: ("v1", "ConfigMap"),
}
PASSING = (404, 409, 403)
"""Refusals that the next sync resolves (403: the ServiceAccount admission before ``default`` exists)."""
log = logging.getLogger("tests.k8s.real.kubelet")


class ApiStore:
    """The kubelet's store over the real API server, limited to ``namespaces``."""

    def __init__(self, kube: Kube, namespaces: tuple[str, ...]) -> None:
        self.kube, self.namespaces = kube, namespaces
        self._wakeup: asyncio.Event | None = None

    def items(self, res: kmock.resource) -> list[JSON]:
        """Live objects of ``res`` in the kubelet's namespaces (list items carry no kind: added)."""
        api_version, kind = KINDS[res]
        found = [item for ns in self.namespaces for item in self.kube.list(api_version, kind, ns)]
        for item in found:
            item.setdefault("apiVersion", api_version)
            item.setdefault("kind", kind)
        return [item for item in found if not item["metadata"].get("deletionTimestamp")]

    def live(self, res: kmock.resource, namespace: str, name: str) -> JSON | None:
        """One object, or None."""
        found = self.kube.get(*KINDS[res], namespace, name)
        return None if found is None or found["metadata"].get("deletionTimestamp") else found

    def create(self, res: kmock.resource, namespace: str, body: JSON) -> None:
        """POST it; a passing refusal waits for the next sync."""
        api_version, kind = KINDS[res]
        with self._passing(f"create {kind} {namespace}/{body['metadata']['name']}"):
            self.kube.create({**body, "apiVersion": api_version, "kind": kind})

    def delete(self, res: kmock.resource, namespace: str, name: str) -> None:
        """DELETE it (gone already is fine)."""
        with self._passing(f"delete {KINDS[res][1]} {namespace}/{name}"):
            self.kube.delete(*KINDS[res], namespace, name)

    def set_status(self, res: kmock.resource, current: JSON, status: JSON) -> None:
        """PUT ``/status`` guarded by the object's resourceVersion."""
        meta = current["metadata"]
        path = self.kube.path(*KINDS[res], meta["namespace"], meta["name"], "status")
        with self._passing(f"status of {KINDS[res][1]} {meta['namespace']}/{meta['name']}"):
            self.kube.request("PUT", path, json={**current, "status": status})

    async def next_change(self, timeout: float) -> None:
        """Wait ``POLL_S`` (or until ``wake``)."""
        self._wakeup = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wakeup.wait(), min(timeout, POLL_S))

    def wake(self) -> None:
        """End the current wait."""
        if self._wakeup is not None:
            self._wakeup.set()

    @contextlib.contextmanager
    def _passing(self, what: str) -> Any:
        try:
            yield
        except ApiError as exc:
            if exc.status_code not in PASSING:
                raise
            log.info("kubelet: %s refused for now (%s); retried at the next sync", what, exc)


class RealKubelet:
    """A ``Kubelet`` over ``ApiStore`` on a loop of its own thread, until ``stop``."""

    def __init__(self, kube: Kube, root: Path, namespaces: tuple[str, ...]) -> None:
        self.kube = kube
        self.kubelet = Kubelet(ApiStore(kube, namespaces), root)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="real-kubelet", daemon=True)
        self._task: Any = None

    def start(self) -> RealKubelet:
        """Start syncing pods."""
        self._thread.start()
        self._task = asyncio.run_coroutine_threadsafe(self.kubelet.run(), self._loop)
        return self

    def stop(self) -> None:
        """Stop every pod process, end the loop and close the client; a failure of the loop is raised."""
        try:
            asyncio.run_coroutine_threadsafe(self.kubelet.stop(), self._loop).result(60)
            self._task.result(30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self._loop.close()
            self.kube.close()

    def resolve(self, url: str) -> str | None:
        """The local URL of the ready pod behind a Service URL (the operator's route to Services)."""
        return self.kubelet.resolve(url)

    def logs(self, namespace: str, deployment: str) -> str:
        """A pod's stderr, for failure messages."""
        return self.kubelet.logs(namespace, deployment)
