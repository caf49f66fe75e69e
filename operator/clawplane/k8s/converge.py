"""Write a managed object only when its content changed: the one write path for every child."""

from __future__ import annotations

from typing import Any

from clawplane.k8s.children import spec_hash
from clawplane.k8s.kubeapi import ApiError, Kind, KubeApi


async def converge(
    api: KubeApi, kind: Kind, namespace: str, wanted: dict[str, Any], current: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The stored object, written first when its spec hash differs from ``wanted``'s.

    ``current`` is what a listing of this pass showed; a create that races with someone
    else's (409) and any update go through a guarded read-modify-write.
    """
    if current is not None and spec_hash(current) == spec_hash(wanted):
        return current
    if current is None:
        try:
            return await api.create(kind, namespace, wanted)
        except ApiError as exc:
            if exc.status != 409:
                raise

    def mutate(stored: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if spec_hash(stored) == spec_hash(wanted) else dict(wanted)

    return await api.update(kind, namespace, wanted["metadata"]["name"], mutate)
