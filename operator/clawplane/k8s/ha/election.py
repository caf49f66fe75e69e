"""Leader election on a ``coordination.k8s.io/v1`` Lease, the way client-go's leaderelection does it.

Several operator replicas run; the one holding the Lease reconciles, the others wait. Expiry
is judged by each replica's own monotonic clock from the moment it *saw* the Lease change (never
from the timestamps written into it), so clock skew between nodes cannot make two leaders:

- a standby takes the Lease only when its holder is empty (released) or has not renewed for
  ``lease_duration`` seconds since the standby last saw it change;
- the leader renews every ``retry_period`` and considers itself leader only until
  ``renew_deadline`` after the *start* of its last successful renewal, which is earlier than any
  standby can see the Lease as expired (``renew_deadline < lease_duration``).

Writes to the Lease carry its resourceVersion, so of two replicas racing for it one gets 409.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from clawplane.k8s.api.kubeapi import LEASES, ApiError, KubeApi
from clawplane.k8s.ha import DEFAULT_LEASE_NAME

log = logging.getLogger("clawplane.k8s")

JITTER = 1.2
"""A standby waits between ``retry_period`` and ``JITTER`` times it, so standbys do not retry in step."""


class ElectionError(ValueError):
    """The election settings cannot work; the message says which and why."""


@dataclass(frozen=True)
class ElectionSettings:
    """Where the Lease is, who we are, and the three durations (seconds)."""

    namespace: str
    identity: str
    name: str = DEFAULT_LEASE_NAME
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def __post_init__(self) -> None:
        if self.lease_duration < 1 or self.lease_duration != int(self.lease_duration):
            raise ElectionError(
                f"the lease duration must be a whole number of seconds >= 1 (a Lease stores "
                f"leaseDurationSeconds as an integer), got {self.lease_duration:g}"
            )
        if not self.renew_deadline < self.lease_duration:
            raise ElectionError(
                f"the renew deadline ({self.renew_deadline:g}s) must be shorter than the lease duration "
                f"({self.lease_duration:g}s): the leader must stop before a standby may take over"
            )
        if not 0 < JITTER * self.retry_period < self.renew_deadline:
            raise ElectionError(
                f"the retry period ({self.retry_period:g}s) must be positive and below the renew deadline "
                f"/ {JITTER} ({self.renew_deadline / JITTER:g}s), or a slow renewal loses the lease"
            )


def micro_time(now: datetime | None = None) -> str:
    """A Kubernetes MicroTime (RFC 3339 with microseconds, UTC)."""
    return (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """Acquires, renews and releases one Lease; ``leading`` says whether this replica may write."""

    def __init__(
        self,
        api: KubeApi,
        settings: ElectionSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[bool], None] | None = None,
    ) -> None:
        self.api = api
        self.settings = settings
        self.clock = clock
        self.on_change = on_change
        self.lost_reason = ""
        self._renewed_at: float | None = None
        """Monotonic time at which the last successful acquire/renew request was *sent*."""
        self._observed: tuple[str, float] | None = None
        """(resourceVersion, monotonic time first seen) of the Lease as last read."""
        self._holder = ""

    # --- state ----------------------------------------------------------------------------------

    @property
    def leading(self) -> bool:
        """True while the last renewal is recent enough that no standby can have taken over."""
        at = self._renewed_at
        return at is not None and self.clock() - at < self.settings.renew_deadline

    @property
    def holder(self) -> str:
        """The holder identity last seen on the Lease ("" when free or not read yet)."""
        return self._holder

    def fence(self) -> str | None:
        """For ``KubeApi(write_fence=...)``: why a write must not be sent now (None: it may)."""
        if self.leading:
            return None
        lease = f"{self.settings.namespace}/{self.settings.name}"
        return f"this operator does not hold the leader Lease {lease}; only the leader writes"

    def _set_renewed(self, at: float | None) -> None:
        was = self._renewed_at is not None
        self._renewed_at = at
        if self.on_change is not None and was != (at is not None):
            self.on_change(at is not None)

    def _observe(self, lease: dict[str, Any]) -> dict[str, Any]:
        rv = str((lease.get("metadata") or {}).get("resourceVersion") or "")
        if self._observed is None or self._observed[0] != rv:
            self._observed = (rv, self.clock())
        spec: dict[str, Any] = lease.get("spec") or {}
        self._holder = str(spec.get("holderIdentity") or "")
        return spec

    def _expired(self, spec: dict[str, Any]) -> bool:
        assert self._observed is not None
        duration = float(spec.get("leaseDurationSeconds") or self.settings.lease_duration)
        return self.clock() - self._observed[1] >= duration

    # --- one attempt -------------------------------------------------------------------------------

    def _spec(self, *, acquired: str, transitions: int) -> dict[str, Any]:
        return {
            "holderIdentity": self.settings.identity,
            "leaseDurationSeconds": math.ceil(self.settings.lease_duration),
            "acquireTime": acquired,
            "renewTime": micro_time(),
            "leaseTransitions": transitions,
        }

    async def try_acquire_or_renew(self) -> bool:
        """One attempt: create the Lease, take it (free or expired) or renew ours; False: another holds it."""
        s = self.settings
        sent = self.clock()
        lease = await self.api.get(LEASES, s.namespace, s.name)
        try:
            if lease is None:
                body = {
                    "apiVersion": LEASES.api_version,
                    "kind": LEASES.kind,
                    "metadata": {"name": s.name, "namespace": s.namespace},
                    "spec": self._spec(acquired=micro_time(), transitions=0),
                }
                written = await self.api.create(LEASES, s.namespace, body)
            else:
                spec = self._observe(lease)
                holder = self._holder
                if holder and holder != s.identity and not self._expired(spec):
                    return False
                ours = holder == s.identity
                wanted = copy.deepcopy(lease)
                transitions = int(spec.get("leaseTransitions") or 0)
                wanted["spec"] = self._spec(
                    acquired=str(spec.get("acquireTime") or micro_time()) if ours else micro_time(),
                    transitions=transitions if ours else transitions + 1,
                )
                written = await self.api.replace(LEASES, s.namespace, wanted)
        except ApiError as exc:
            if exc.status == 409:  # another replica wrote first (created it, or took/renewed it)
                return False
            raise
        self._observe(written)
        self._set_renewed(sent)
        return True

    async def _attempt(self, timeout: float) -> bool | None:
        """An attempt bounded by ``timeout``; None when the API could not be reached (logged)."""
        try:
            return await asyncio.wait_for(self.try_acquire_or_renew(), max(timeout, 0.05))
        except (ApiError, httpx.HTTPError, TimeoutError, ValueError) as exc:
            log.warning(
                "leader election: Lease %s/%s not reachable (%s)",
                self.settings.namespace,
                self.settings.name,
                str(exc) or type(exc).__name__,
            )
            return None

    # --- loops -----------------------------------------------------------------------------------

    async def acquire(self) -> None:
        """Return once this replica holds the Lease (retrying every retry period; cancel to give up)."""
        s = self.settings
        reported = ""
        while True:
            if await self._attempt(s.retry_period * JITTER):
                log.info(
                    "leader election: became the leader (Lease %s/%s, identity %s)",
                    s.namespace,
                    s.name,
                    s.identity,
                )
                return
            if self._holder and self._holder != reported:
                reported = self._holder
                log.info("leader election: standby; %s holds the Lease %s/%s", reported, s.namespace, s.name)
            await asyncio.sleep(s.retry_period * random.uniform(1.0, JITTER))

    async def hold(self) -> str:
        """Renew until leadership is lost; returns why (the leader must then stop writing at once)."""
        s = self.settings
        while True:
            await asyncio.sleep(s.retry_period)
            assert self._renewed_at is not None, "hold() before acquire()"
            remaining = s.renew_deadline - (self.clock() - self._renewed_at)
            ok = await self._attempt(remaining) if remaining > 0 else None
            if ok is False:
                return self._lose(
                    f"{self._holder or 'another replica'} took the Lease {s.namespace}/{s.name}"
                )
            if not self.leading:
                return self._lose(
                    f"could not renew the Lease {s.namespace}/{s.name} within {s.renew_deadline:g}s"
                )

    def _lose(self, reason: str) -> str:
        self._set_renewed(None)
        self.lost_reason = reason
        log.error("leader election: lost leadership: %s", reason)
        return reason

    async def release(self) -> bool:
        """Give the Lease up (clean shutdown) so a standby takes over at its next retry, not after expiry."""
        if not self.leading:
            return False
        s = self.settings
        self._set_renewed(None)  # stop writing before the Lease says we stopped
        try:
            lease = await asyncio.wait_for(self.api.get(LEASES, s.namespace, s.name), s.retry_period * JITTER)
            if lease is None or self._observe(lease).get("holderIdentity") != s.identity:
                return False
            wanted = copy.deepcopy(lease)
            now = micro_time()
            wanted["spec"] = {
                **wanted.get("spec", {}),
                "holderIdentity": "",
                "leaseDurationSeconds": 1,
                "acquireTime": now,
                "renewTime": now,
            }
            await asyncio.wait_for(self.api.replace(LEASES, s.namespace, wanted), s.retry_period * JITTER)
        except (ApiError, httpx.HTTPError, TimeoutError, ValueError) as exc:
            log.warning(
                "leader election: could not release the Lease %s/%s (%s); it expires on its own",
                s.namespace,
                s.name,
                exc,
            )
            return False
        log.info("leader election: released the Lease %s/%s", s.namespace, s.name)
        return True
