"""Kubernetes Events (``events.k8s.io/v1``) about what the operator did to a resource's children.

One Event per created, updated or deleted child and per refused write, ``regarding`` the
custom resource and ``related`` to the child, so ``kubectl describe mcpserver/NAME`` and
``kubectl get events`` show them. The same report is not posted twice in a row (a failing
child would otherwise add an Event every pass). Posting is best effort: a refused Event is
logged and never fails a pass.
"""

from __future__ import annotations

import datetime
import logging
import os
import secrets
import socket
from dataclasses import dataclass, field
from typing import Any

from clawplane.k8s.children import GROUP, Owner
from clawplane.k8s.kubeapi import ApiError, Kind, KubeApi

log = logging.getLogger("clawplane.k8s")

EVENTS = Kind("events.k8s.io", "v1", "events", "Event")
CONTROLLER = f"{GROUP}/operator"
NOTE_LIMIT = 1024


def _instance() -> str:
    return (os.environ.get("POD_NAME") or socket.gethostname() or "clawplane")[:128]


def _now() -> str:
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class EventRecorder:
    """Posts Events for one namespace."""

    api: KubeApi
    namespace: str
    instance: str = field(default_factory=_instance)
    _last: dict[tuple[str, str, str], str] = field(default_factory=dict)

    async def record(
        self,
        owner: Owner,
        *,
        reason: str,
        action: str,
        note: str,
        warning: bool = False,
        related: dict[str, Any] | None = None,
    ) -> None:
        """Post one Event about ``owner`` (skipped when it repeats the last one for this child)."""
        child = f"{(related or {}).get('kind', '')}/{(related or {}).get('name', '')}"
        key = (f"{owner.kind}/{owner.name}", child, reason)
        if self._last.get(key) == note:
            return
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": f"{owner.name}.{secrets.token_hex(8)}",
                "namespace": self.namespace,
                "labels": {"app.kubernetes.io/managed-by": "clawplane"},
            },
            "eventTime": _now(),
            "reportingController": CONTROLLER,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "note": note[: NOTE_LIMIT - 1] + "…" if len(note) > NOTE_LIMIT else note,
            "type": "Warning" if warning else "Normal",
            "regarding": {
                "apiVersion": f"{GROUP}/v1alpha1",
                "kind": owner.kind,
                "name": owner.name,
                "namespace": self.namespace,
                "uid": owner.uid,
            },
        }
        if related is not None:
            body["related"] = {k: v for k, v in related.items() if v}
        try:
            await self.api.create(EVENTS, self.namespace, body)
            self._last[key] = note
        except ApiError as exc:
            log.warning(
                "%s: could not post Event %s for %s/%s: %s",
                self.namespace,
                reason,
                owner.kind,
                owner.name,
                exc,
            )

    def forget(self, owner: Owner) -> None:
        """Drop the memory of a deleted resource's Events."""
        prefix = f"{owner.kind}/{owner.name}"
        for key in [k for k in self._last if k[0] == prefix]:
            del self._last[key]
