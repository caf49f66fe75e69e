"""Watches of what clawplane creates and reads, filtered by the API server, turned into namespace passes.

kopf watches the custom resources. The children (Deployments, Services, ConfigMaps,
Secrets and NetworkPolicies labelled ``app.kubernetes.io/managed-by: clawplane``) are watched
here with a label selector, so the API server sends only those, and a deleted or edited child
gets a pass at once instead of at the next resync. Secrets that resources reference carry no
label of ours: they are watched per namespace clawplane manages (never cluster-wide), and
only a change to a referenced one asks for a pass. Events caused by the operator's own writes
are recognised by their resourceVersion and ignored.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

from clawplane.k8s.api.kubeapi import (
    CONFIGMAPS,
    DEPLOYMENTS,
    NETWORK_POLICIES,
    PODS,
    SECRETS,
    SERVICES,
    ApiError,
    Kind,
    KubeApi,
)
from clawplane.k8s.objects.childcache import ChildCache
from clawplane.k8s.objects.children import MANAGED_BY, SERVER_LABEL

log = logging.getLogger("clawplane.k8s")

MANAGED_SELECTOR = ",".join(f"{k}={v}" for k, v in MANAGED_BY.items())
CHILD_KINDS = (DEPLOYMENTS, SERVICES, CONFIGMAPS, SECRETS, NETWORK_POLICIES)
RETRY_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)
OWN_WRITES_KEPT = 10_000


@dataclass
class OwnWrites:
    """resourceVersions the operator itself produced, so their watch events start no pass."""

    _seen: OrderedDict[tuple[str, str, str, str], None] = field(default_factory=OrderedDict)

    def add(self, kind: Kind, obj: dict[str, Any] | None) -> None:
        """Remember the object as written by us."""
        meta = (obj or {}).get("metadata") or {}
        if meta.get("resourceVersion"):
            self._seen[
                (kind.plural, meta.get("namespace") or "", meta.get("name") or "", meta["resourceVersion"])
            ] = None
            while len(self._seen) > OWN_WRITES_KEPT:
                self._seen.popitem(last=False)

    def __contains__(self, item: tuple[Kind, dict[str, Any]]) -> bool:
        kind, obj = item
        meta = obj.get("metadata") or {}
        key = (
            kind.plural,
            meta.get("namespace") or "",
            meta.get("name") or "",
            str(meta.get("resourceVersion")),
        )
        return key in self._seen


Poke = Callable[[str], None]
"""Ask for a pass of a namespace (only if clawplane manages something there)."""


async def watch_forever(
    api: KubeApi,
    kind: Kind,
    namespace: str | None,
    on_event: Callable[[str, dict[str, Any]], None],
    *,
    labels: str | None = None,
    cache: ChildCache | None = None,
    timeout_seconds: int = 300,
) -> None:
    """List, then watch from the list's version; start over on 410 Gone; retry with backoff on errors.

    A watch the server ends (after ``timeout_seconds``) resumes from the last version seen, which
    bookmarks keep moving while nothing watched changes, so the resume point is never compacted away
    merely for being quiet.

    With ``cache``, the list and every event are kept there before ``on_event`` hears of them, so a
    pass the event asks for reads the object as the event has it.
    """
    failures = 0
    version: str | None = None
    while True:
        try:
            if version is None:
                items, version = await api.list_versioned(kind, namespace, labels=labels)
                if cache is not None:
                    cache.listed(kind, namespace, items, version)
            watching = api.watch(
                kind, namespace, resource_version=version, labels=labels, timeout_seconds=timeout_seconds
            )
            async for event in watching:
                failures = 0
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    if obj.get("code") == 410:  # compacted away: list again
                        version = None
                        if cache is not None:
                            cache.lost(kind, namespace)
                        break
                    raise ApiError(
                        int(obj.get("code") or 500), str(obj.get("reason")), str(obj.get("message"))
                    )
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if event.get("type") != "BOOKMARK":
                    if cache is not None:
                        cache.event(kind, str(event.get("type")), obj)
                    on_event(str(event.get("type")), obj)
        except asyncio.CancelledError:
            raise
        except (httpx.HTTPError, ApiError, ValueError) as exc:
            if cache is not None:  # events may be lost until the next list: passes list for themselves
                cache.lost(kind, namespace)
            delay = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
            failures += 1
            log.warning(
                "watch of %s%s failed (%s); retrying in %.0fs",
                kind.plural,
                f" in {namespace}" if namespace else "",
                exc,
                delay,
            )
            version = None if isinstance(exc, ApiError) else version
            await asyncio.sleep(delay)


@dataclass
class Watches:
    """The operator's own watches: children by label, referenced Secrets per managed namespace."""

    api: KubeApi
    poke: Poke
    own: OwnWrites
    namespaces: tuple[str, ...] = ()
    """The watched namespaces; empty: cluster-wide (one watch per child kind)."""
    referenced: Callable[[str], set[str] | None] = lambda _ns: None
    """The Secrets a namespace's resources reference (None: not known yet, so any change counts)."""
    cache: ChildCache | None = None
    """Kept by the child watches (and a watch of the servers' pods) for the passes to read."""
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _secret_watches: dict[str, asyncio.Task[None]] = field(default_factory=dict)

    def start(self) -> None:
        """Start the child watches."""
        scopes: Iterable[str | None] = self.namespaces or (None,)
        for scope in scopes:
            for kind in CHILD_KINDS:
                self._tasks.append(
                    asyncio.create_task(
                        watch_forever(
                            self.api,
                            kind,
                            scope,
                            self._child_event(kind),
                            labels=MANAGED_SELECTOR,
                            cache=self.cache,
                        ),
                        name=f"clawplane-watch-{kind.plural}",
                    )
                )
            if self.cache is not None:
                # Pods are the kubelet's, not ours: a restart (its count is in the status) asks for a pass.
                self._tasks.append(
                    asyncio.create_task(
                        watch_forever(
                            self.api, PODS, scope, self._pod_event, labels=SERVER_LABEL, cache=self.cache
                        ),
                        name="clawplane-watch-pods",
                    )
                )

    def manage(self, namespace: str) -> None:
        """Watch the Secrets of a namespace clawplane now manages (once)."""
        if namespace not in self._secret_watches:
            self._secret_watches[namespace] = asyncio.create_task(
                watch_forever(self.api, SECRETS, namespace, self._secret_event(namespace)),
                name=f"clawplane-watch-secrets-{namespace}",
            )

    async def stop(self) -> None:
        """Cancel every watch."""
        tasks = [*self._tasks, *self._secret_watches.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        self._secret_watches.clear()

    def _child_event(self, kind: Kind) -> Callable[[str, dict[str, Any]], None]:
        def handle(event: str, obj: dict[str, Any]) -> None:
            namespace = (obj.get("metadata") or {}).get("namespace")
            if namespace and (event == "DELETED" or (kind, obj) not in self.own):
                self.poke(namespace)

        return handle

    def _pod_event(self, event: str, obj: dict[str, Any]) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace")
        if namespace:
            self.poke(namespace)

    def _secret_event(self, namespace: str) -> Callable[[str, dict[str, Any]], None]:
        def handle(event: str, obj: dict[str, Any]) -> None:
            meta = obj.get("metadata") or {}
            referenced = self.referenced(namespace)
            if referenced is None or meta.get("name") in referenced:
                self.poke(namespace)

        return handle
