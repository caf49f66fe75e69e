"""Coalesced, serialized reconcile passes per namespace.

kopf delivers one event per object; a pass re-reads the whole namespace, so events
that arrive while a pass runs are folded into the next one. Failed passes retry with
exponential backoff, and every namespace is resynced periodically.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from clawplane.k8s.adapter.reconciler import NamespaceReconciler, PassResult
from clawplane.k8s.api.kubeapi import ApiError
from clawplane.reconcile.metrics import LoopMetrics
from clawplane.reconcile.outcome import PassOutcome

log = logging.getLogger("clawplane.k8s")

COALESCE_SECONDS = 0.2
BACKOFF_BASE = 1.0
BACKOFF_MAX = 60.0
EVENT_DRAIN_SECONDS = 2.0
"""At shutdown, how long queued Events may still be posted (best effort, as ever)."""


EXPECTED_FAILURES = (ApiError, httpx.HTTPError, OSError)  # OSError includes TimeoutError
"""What a pass meets when the API server refuses a request or cannot be reached: no bug of ours."""


@dataclass
class Worker:
    """Runs one namespace's passes, one at a time."""

    reconciler: NamespaceReconciler
    metrics: LoopMetrics | None = None
    requested: int = 0
    completed: int = 0
    last: PassResult | None = None
    failures: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Condition = field(default_factory=asyncio.Condition)
    _retry: asyncio.TimerHandle | None = None

    def poke(self) -> int:
        """Ask for a pass; returns the request number a waiter can wait for."""
        self.requested += 1
        self.wake.set()
        return self.requested

    async def wait(self, ticket: int, timeout: float) -> PassResult | None:
        """The result of the first pass that started after request ``ticket``."""
        async with self.done:
            await asyncio.wait_for(self.done.wait_for(lambda: self.completed >= ticket), timeout)
        return self.last

    async def run(self) -> None:
        """Serve pass requests until cancelled."""
        while True:
            await self.wake.wait()
            # Let a burst of events (e.g. `kubectl apply -f dir/`) land before re-reading everything.
            await asyncio.sleep(COALESCE_SECONDS)
            self.wake.clear()
            ticket = self.requested
            result = await self._pass()
            async with self.done:
                self.completed, self.last = ticket, result
                self.done.notify_all()

    async def _pass(self) -> PassResult:
        ns = self.reconciler.namespace
        try:
            result = await self.reconciler.reconcile()
        except EXPECTED_FAILURES as exc:
            # The API server refused or could not be reached: its answer is the whole story, and
            # a traceback per retry would bury it.
            log.warning("namespace %s: reconcile failed: %s: %s", ns, type(exc).__name__, exc)
            result = PassResult(ok=False, error=f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # a pass must never kill the worker: report, back off, retry
            log.exception("namespace %s: reconcile failed", ns)
            result = PassResult(ok=False, error=f"{type(exc).__name__}: {exc}")
        self._record(result)
        if result.ok and not result.requeue:
            self.failures = 0
            if result.recheck_in is not None:  # a held action's request expires then: report it
                self._schedule(result.recheck_in)
            return result
        self.failures += 1
        delay = min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (self.failures - 1))
        if not result.ok:
            log.warning(
                "namespace %s: pass failed (%s); retrying in %.0fs", ns, result.error or "see above", delay
            )
        self._schedule(delay)
        return result

    def _record(self, result: PassResult) -> None:
        ns = self.reconciler.namespace
        log.info(
            "namespace %s: pass %s in %.2fs (%d actions, %d ConfigMaps, %d statuses)",
            ns,
            "ok" if result.ok else "failed",
            result.seconds,
            sum(1 for v in result.results.values() if v == "ok"),
            len(result.config_maps),
            result.statuses,
        )
        if self.metrics is not None:
            outcome = PassOutcome.APPLIED if result.ok else PassOutcome.FAILED
            self.metrics.reconciles.labels(result=outcome).inc()
            self.metrics.duration.observe(result.seconds)
            if result.ok:
                self.metrics.last_success.set(time.time())
            else:
                self.metrics.errors.inc()

    def _schedule(self, delay: float) -> None:
        if self._retry is not None:
            self._retry.cancel()
        self._retry = asyncio.get_running_loop().call_later(delay, self.poke)


@dataclass
class Hub:
    """Every namespace's worker, created on first use."""

    factory: Callable[[str], NamespaceReconciler]
    metrics: LoopMetrics | None = None
    on_new_namespace: Callable[[str], None] | None = None
    """Called once per namespace when its worker starts (to watch its Secrets)."""
    admits: Callable[[str], bool] = lambda _namespace: True
    """Whether this operator reconciles the namespace (``--namespace-selector``); others get no pass."""
    workers: dict[str, Worker] = field(default_factory=dict)
    _tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)

    def worker(self, namespace: str) -> Worker:
        """The namespace's worker (started now if new)."""
        worker = self.workers.get(namespace)
        if worker is None:
            worker = self.workers[namespace] = Worker(self.factory(namespace), self.metrics)
            self._tasks[namespace] = asyncio.create_task(worker.run(), name=f"clawplane-{namespace}")
            if self.on_new_namespace is not None:
                self.on_new_namespace(namespace)
        return worker

    def poke(self, namespace: str) -> int:
        """Request a pass of ``namespace`` (0, and nothing, when another shard owns it)."""
        if not self.admits(namespace):
            return 0
        return self.worker(namespace).poke()

    def poke_known(self, namespace: str) -> None:
        """Request a pass only if clawplane already manages resources there."""
        if namespace in self.workers and self.admits(namespace):
            self.workers[namespace].poke()

    def forget(self, namespace: str) -> None:
        """Stop the namespace's worker (another shard owns it now); a later poke starts afresh."""
        worker = self.workers.pop(namespace, None)
        task = self._tasks.pop(namespace, None)
        if task is not None:
            task.cancel()
            if worker is not None:
                task.add_done_callback(lambda _: worker.reconciler.close())

    def referenced_secrets(self, namespace: str) -> set[str] | None:
        """The Secrets the namespace's resources referenced in its last pass (None before the first)."""
        worker = self.workers.get(namespace)
        return worker.reconciler.referenced_secrets if worker is not None else None

    async def resync(self, interval: float) -> None:
        """Poke every namespace each ``interval`` seconds, until cancelled."""
        while True:
            await asyncio.sleep(interval)
            for worker in list(self.workers.values()):
                worker.poke()

    async def stop(self) -> None:
        """Cancel every worker and close their state."""
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        for worker in self.workers.values():
            await worker.reconciler.events.aclose(EVENT_DRAIN_SECONDS)
            worker.reconciler.close()
        self._tasks.clear()
        self.workers.clear()
