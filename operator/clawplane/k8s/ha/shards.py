"""Sharding: the namespaces one operator deployment reconciles, chosen by a label selector.

``clawplane k8s run --namespace-selector 'clawplane.dev/shard=a'`` reconciles only the
namespaces whose labels match; another deployment with ``clawplane.dev/shard=b`` takes the
others. Selectors on the same key with different values never overlap, so no namespace has
two writers. The selection is a list, then a watch, of Namespaces with that label selector
(the API server filters, and tells a namespace that stops matching as DELETED):

- a namespace that starts to match gets a full pass at once (level-based: it adopts the
  children another shard made, which are owned by the resources, not by an operator);
- one that stops matching is dropped: its worker stops, events about it are ignored and its
  resources keep no finalizer of this shard — the shard that now selects it takes over.

Kubernetes' own label selector syntax is used as is (``k=v``, ``k!=v``, ``k in (a,b)``,
``!k``); the API server rejects a malformed one, and so does the start-up check here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from clawplane.k8s.api.kubeapi import ApiError, Kind, KubeApi

log = logging.getLogger("clawplane.k8s")

NAMESPACES = Kind("", "v1", "namespaces", "Namespace")
RETRY_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)


@dataclass
class NamespaceSelection:
    """The namespaces matching ``selector``, kept current by a watch (see the module docstring)."""

    selector: str
    on_added: Callable[[str], None] = lambda _ns: None
    on_removed: Callable[[str], None] = lambda _ns: None
    names: set[str] = field(default_factory=set)
    listed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the first list has arrived (before it, nothing is selected)."""

    def __contains__(self, namespace: object) -> bool:
        return namespace in self.names

    def _replace(self, names: set[str]) -> None:
        for gone in sorted(self.names - names):
            self._remove(gone)
        for new in sorted(names - self.names):
            self._add(new)

    def _add(self, namespace: str) -> None:
        if namespace not in self.names:
            self.names.add(namespace)
            log.info("namespace %s matches --namespace-selector %s: reconciling it", namespace, self.selector)
            self.on_added(namespace)

    def _remove(self, namespace: str) -> None:
        if namespace in self.names:
            self.names.discard(namespace)
            log.info(
                "namespace %s no longer matches --namespace-selector %s: leaving it", namespace, self.selector
            )
            self.on_removed(namespace)

    def _event(self, kind: str, obj: dict[str, Any]) -> None:
        name = (obj.get("metadata") or {}).get("name")
        if not name:
            return
        if kind == "DELETED":
            self._remove(name)
        elif kind in ("ADDED", "MODIFIED"):
            self._add(name)

    async def run(self, api: KubeApi) -> None:
        """List, then watch, until cancelled; every relist replaces the selection."""
        failures = 0
        while True:
            try:
                items, version = await api.list_versioned(NAMESPACES, None, labels=self.selector)
                self._replace({str(o["metadata"]["name"]) for o in items})
                self.listed.set()
                async for event in api.watch(
                    NAMESPACES, None, resource_version=version, labels=self.selector
                ):
                    failures = 0
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        break  # e.g. 410 Gone: list again
                    if event.get("type") != "BOOKMARK":
                        self._event(str(event.get("type")), obj)
            except asyncio.CancelledError:
                raise
            except ApiError as exc:
                if exc.status == 400:  # a malformed selector: retrying will not mend it
                    raise
                await self._back_off(failures, exc)
                failures += 1
            except (httpx.HTTPError, ValueError) as exc:
                await self._back_off(failures, exc)
                failures += 1

    async def _back_off(self, failures: int, exc: Exception) -> None:
        delay = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
        log.warning("watch of namespaces (%s) failed (%s); retrying in %.0fs", self.selector, exc, delay)
        await asyncio.sleep(delay)
