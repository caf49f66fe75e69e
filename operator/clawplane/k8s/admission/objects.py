"""The custom resources a review is checked against, kept by watches instead of listed per review.

A review checks the object with the rest of its namespace (references, names that collide after
OpenClaw's sanitizing). Listing the six kinds for every review cost the API server six lists per
``kubectl apply`` of one object; a watch per kind (cluster-wide, or per watched namespace in a
namespaced install whose RBAC grants nothing cluster-wide) keeps them here instead. Until a
kind's first list is in, or after its watch failed, ``objects`` answers None and the webhook
lists as before: a review never waits for the cache. A watch can lag the store by the time an
event takes to arrive, so an object created a moment before a review may be missing from it;
clawplane's own validation in the operator still sees it (``Accepted=False``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

import httpx

from clawplane.k8s.api.kubeapi import ApiError, Kind, KubeApi

log = logging.getLogger("clawplane.k8s.admission")

RETRY_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)
Key = tuple[str, str]
"""(namespace, name) of one object of one kind."""


class WatchedObjects:
    """Live copies of ``kinds`` in ``namespaces`` (empty: all), fed by one watch per kind and scope."""

    def __init__(self, kinds: Iterable[Kind], namespaces: tuple[str, ...] = ()) -> None:
        self.kinds = list(kinds)
        self.scopes: tuple[str | None, ...] = namespaces or (None,)
        self._objects: dict[tuple[str, str | None], dict[Key, dict[str, Any]]] = {}
        self._synced: set[tuple[str, str | None]] = set()

    def objects(self, namespace: str) -> list[dict[str, Any]] | None:
        """Every cached object of ``namespace``, or None while any kind is not in step."""
        scope = namespace if namespace in self.scopes else None
        if scope not in self.scopes:
            return None
        found: list[dict[str, Any]] = []
        for kind in self.kinds:
            if (kind.plural, scope) not in self._synced:
                return None
            found += [obj for (ns, _), obj in self._objects[(kind.plural, scope)].items() if ns == namespace]
        return found

    async def run(self, api: KubeApi) -> None:
        """Keep every kind in step until cancelled."""
        await asyncio.gather(
            *(self._follow(api, kind, scope) for kind in self.kinds for scope in self.scopes)
        )

    async def _follow(self, api: KubeApi, kind: Kind, scope: str | None) -> None:
        slot = (kind.plural, scope)
        failures = 0
        while True:
            try:
                items, version = await api.list_versioned(kind, scope)
                self._objects[slot] = {_key(obj): obj for obj in items}
                self._synced.add(slot)
                resume: str | None = version
                while resume is not None:  # the server ended a watch in good order: go on from there
                    resume = await self._watch(api, kind, scope, resume)
                    failures = 0
            except asyncio.CancelledError:
                raise
            except (ApiError, httpx.HTTPError, ValueError, OSError) as exc:
                self._synced.discard(slot)  # out of step: reviews list again until the next list
                delay = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
                log.warning("admission: watch of %s failed (%s); retrying in %.0fs", kind.plural, exc, delay)
                failures += 1
                await asyncio.sleep(delay)

    async def _watch(self, api: KubeApi, kind: Kind, scope: str | None, version: str) -> str | None:
        """Apply one watch's events; the version to go on from, or None when a list must come first."""
        slot = (kind.plural, scope)
        async for event in api.watch(kind, scope, resource_version=version):
            what, obj = event.get("type"), event.get("object") or {}
            if what == "ERROR":
                return None  # e.g. 410 Gone: the version is too old to go on from
            version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
            if what == "DELETED":
                self._objects[slot].pop(_key(obj), None)
            elif what in ("ADDED", "MODIFIED"):
                self._objects[slot][_key(obj)] = obj
        return version


def _key(obj: dict[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
