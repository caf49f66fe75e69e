"""A watch-fed copy of clawplane's children, so a pass reads them from memory instead of listing them.

Every pass used to LIST each child kind of its namespace (Deployments, Services, Secrets,
NetworkPolicies, ConfigMaps, Pods): with 500 servers, thousands of objects sent, parsed and
thrown away per pass while nothing had changed. The watches that already turn child changes into
passes (``watches.Watches``) now also keep this copy, as an informer does: their list fills a
scope, their events update it. The operator's own writes go in from the write's response, so the
next pass never waits for its own watch event. A scope whose watch failed is not trusted until
its next list is in; until then a pass lists as before (``objects`` answers None).

Versions only move forward: an event or list older than what is held (a late watch event of an
object the operator has just rewritten, or deleted) is ignored. resourceVersions are compared as
integers, as etcd issues them; one that is not an integer always wins (the server's word is newer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clawplane.k8s.api.kubeapi import Kind

JSON = dict[str, Any]
ObjectKey = tuple[str, str]
"""``(namespace, name)``."""


def _version(obj: JSON | None) -> int | None:
    raw = ((obj or {}).get("metadata") or {}).get("resourceVersion")
    try:
        return int(str(raw))
    except ValueError:
        return None


def _older(incoming: int | None, held: int | None) -> bool:
    return incoming is not None and held is not None and incoming < held


def _not_after(incoming: int | None, deleted_at: int | None) -> bool:
    return incoming is not None and deleted_at is not None and incoming <= deleted_at


@dataclass
class _Store:
    objects: dict[ObjectKey, JSON] = field(default_factory=dict)
    gone: dict[ObjectKey, int] = field(default_factory=dict)
    """The version at which an object was deleted: older news of it must not bring it back."""
    synced: set[str | None] = field(default_factory=set)
    """Scopes (a namespace, or None for all) whose list is in and whose watch is running."""

    def put(self, key: ObjectKey, obj: JSON) -> None:
        version = _version(obj)
        if _older(version, _version(self.objects.get(key))) or _not_after(version, self.gone.get(key)):
            return
        self.gone.pop(key, None)
        self.objects[key] = obj

    def drop(self, key: ObjectKey, version: int | None) -> None:
        held = self.objects.get(key)
        if held is not None and _older(version, _version(held)):
            return
        self.objects.pop(key, None)
        if version is not None:
            self.gone[key] = max(version, self.gone.get(key, version))


def _labels(obj: JSON) -> dict[str, Any]:
    return (obj.get("metadata") or {}).get("labels") or {}


def _key(obj: JSON) -> ObjectKey:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


@dataclass
class ChildCache:
    """Children by kind and namespace, as the watches last reported them (plus the operator's writes)."""

    _stores: dict[str, _Store] = field(default_factory=dict)

    def _store(self, kind: Kind) -> _Store:
        return self._stores.setdefault(kind.plural, _Store())

    def listed(self, kind: Kind, scope: str | None, items: list[JSON], version: str) -> None:
        """A watch's list: the scope now holds exactly these (what is newer than the list stays)."""
        store = self._store(kind)
        list_version = _version({"metadata": {"resourceVersion": version}})
        fresh = {_key(obj) for obj in items}
        for key in [k for k in store.objects if scope is None or k[0] == scope]:
            if key not in fresh and not _older(list_version, _version(store.objects[key])):
                del store.objects[key]
        for obj in items:
            store.put(_key(obj), obj)
        store.synced.add(scope)

    def lost(self, kind: Kind, scope: str | None) -> None:
        """The scope's watch failed: events may be missing until its next list."""
        self._store(kind).synced.discard(scope)

    def event(self, kind: Kind, event: str, obj: JSON) -> None:
        """A watch event: ``ADDED``, ``MODIFIED`` or ``DELETED`` (also sent when it leaves the selection)."""
        if event == "DELETED":
            self._store(kind).drop(_key(obj), _version(obj))
        elif event in ("ADDED", "MODIFIED"):
            self._store(kind).put(_key(obj), obj)

    def wrote(self, kind: Kind, obj: JSON) -> None:
        """The operator's own write, as the API server answered it."""
        self._store(kind).put(_key(obj), obj)

    def deleted(self, kind: Kind, namespace: str, name: str) -> None:
        """The operator deleted the object: it is gone unless a newer version turns up."""
        store = self._store(kind)
        key = (namespace, name)
        store.drop(key, _version(store.objects.get(key)))

    def objects(self, kind: Kind, namespace: str, *, label: str | None = None) -> list[JSON] | None:
        """The namespace's objects of ``kind`` (with ``label`` set, if given); None when not in sync."""
        store = self._stores.get(kind.plural)
        if store is None or not (None in store.synced or namespace in store.synced):
            return None
        return [
            obj
            for (ns, _), obj in store.objects.items()
            if ns == namespace and (label is None or label in _labels(obj))
        ]
