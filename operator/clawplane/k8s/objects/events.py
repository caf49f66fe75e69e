"""Kubernetes Events (``events.k8s.io/v1``) about what the operator did to a resource's children.

One Event per created, updated or deleted child and per refused write, ``regarding`` the
custom resource and ``related`` to the child, so ``kubectl describe mcpserver/NAME`` and
``kubectl get events`` show them. The same report is not posted twice in a row (a failing
child would otherwise add an Event every pass). Posting is best effort: a refused Event is
logged and never fails a pass.

As client-go's recorder does, Events are queued and posted by a background sender, one at a
time: a pass that creates 500 servers' children does not wait for 2,000 Event round trips
before it writes their statuses, and the API server serves the writes that matter first.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
import secrets
import socket
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import httpx

from clawplane.k8s.api.kubeapi import ApiError, Kind, KubeApi
from clawplane.k8s.objects.children import GROUP, Owner

log = logging.getLogger("clawplane.k8s")

EVENTS = Kind("events.k8s.io", "v1", "events", "Event")
CONTROLLER = f"{GROUP}/operator"
NOTE_LIMIT = 1024
QUEUE_LIMIT = 10_000
"""Events waiting to be posted; beyond this, new ones are dropped (and the drop logged)."""


def _instance() -> str:
    return (os.environ.get("POD_NAME") or socket.gethostname() or "clawplane")[:128]


def _now() -> str:
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class EventRecorder:
    """Posts Events for one namespace, in the background, in the order they were recorded."""

    api: KubeApi
    namespace: str
    instance: str = field(default_factory=_instance)
    _last: dict[tuple[str, str, str], str] = field(default_factory=dict)
    _queue: deque[tuple[tuple[str, str, str], dict[str, Any]]] = field(default_factory=deque)
    _sender: asyncio.Task[None] | None = None
    _idle: asyncio.Event = field(default_factory=asyncio.Event)
    _dropped: int = 0

    def record(
        self,
        owner: Owner,
        *,
        reason: str,
        action: str,
        note: str,
        warning: bool = False,
        related: dict[str, Any] | None = None,
    ) -> None:
        """Queue one Event about ``owner`` (skipped when it repeats the last one for this child)."""
        child = f"{(related or {}).get('kind', '')}/{(related or {}).get('name', '')}"
        key = (f"{owner.kind}/{owner.name}", child, reason)
        if self._last.get(key) == note:
            return
        if len(self._queue) >= QUEUE_LIMIT:
            self._dropped += 1
            if self._dropped == 1:
                log.warning("%s: more than %d Events waiting; dropping new ones", self.namespace, QUEUE_LIMIT)
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
        self._last[key] = note  # a failed post forgets it, so the next pass reports again
        self._queue.append((key, body))
        self._idle.clear()
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(
                self._send(), name=f"clawplane-events-{self.namespace}"
            )

    async def _send(self) -> None:
        while self._queue:
            key, body = self._queue.popleft()
            try:
                await self.api.create(EVENTS, self.namespace, body)
            except (ApiError, httpx.HTTPError) as exc:
                if self._last.get(key) == body["note"]:
                    del self._last[key]
                regarding = body["regarding"]
                log.warning(
                    "%s: could not post Event %s for %s/%s: %s",
                    self.namespace,
                    body["reason"],
                    regarding["kind"],
                    regarding["name"],
                    exc,
                )
        self._dropped = 0
        self._idle.set()

    async def drain(self, timeout: float) -> bool:
        """Wait until every queued Event was posted (or ``timeout``); False if some are still waiting."""
        if self._sender is None or self._sender.done():
            return not self._queue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)
        return not self._queue

    async def aclose(self, timeout: float = 5.0) -> None:
        """Post what is queued (bounded by ``timeout``), then stop the sender."""
        await self.drain(timeout)
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender
            self._sender = None

    def forget(self, owner: Owner) -> None:
        """Drop the memory of a deleted resource's Events."""
        prefix = f"{owner.kind}/{owner.name}"
        for key in [k for k in self._last if k[0] == prefix]:
            del self._last[key]
