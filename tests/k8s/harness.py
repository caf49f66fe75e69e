"""``EmulatorThread``: the emulator on a free 127.0.0.1 port in a background thread, for sync tests."""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import socket
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

import kmock
import yaml
from tests.k8s import objects as o
from tests.k8s.api import NAMESPACES, Emulator
from tests.k8s.wire import Target, WriteRecord
from tests.support.patience import CONDITION_S

if TYPE_CHECKING:
    from tests.k8s.kubelet import Kubelet

T = TypeVar("T")
JSON = dict[str, Any]
# Aliases, because the class below defines a method named ``list``.
Objects = list[JSON]
Versions = list[JSON | None]
Writes = list[tuple[str, str, str | None]]
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
KUBELET_STOP_TIMEOUT = 60.0
"""Each pod gets 10 s for SIGTERM, then SIGKILL; several pods stop one after another."""


def kubeconfig(url: str, namespace: str = "default", token: str = "") -> JSON:
    """A kubeconfig for ``url`` whose context namespace is ``namespace`` (no auth, or a bearer ``token``)."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "emulator", "cluster": {"server": url}}],
        "users": [{"name": "emulator", "user": {"token": token} if token else {}}],
        "contexts": [
            {
                "name": "emulator",
                "context": {"cluster": "emulator", "user": "emulator", "namespace": namespace},
            }
        ],
        "current-context": "emulator",
    }


def setup_cluster(emu: Emulator, namespaces: Iterable[str] = ()) -> None:
    """Create the ``default`` namespace and any extra ones directly in the store (no HTTP)."""
    for name in ["default", *namespaces]:
        target = Target(NAMESPACES, emu.resources[NAMESPACES], None, name, None)
        if emu._live(target.key()) is None:
            emu._create(target, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def wait_for_port(host: str, port: int, deadline: float) -> None:
    """Poll until a TCP connect succeeds (raises TimeoutError at ``deadline``, a monotonic time)."""
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing answers on {host}:{port}") from None
            # Back off briefly between connection attempts; this is polling, not synchronisation.
            time.sleep(0.02)


class LoopbackServer(kmock.Server):
    """``kmock.Server`` without its process-wide aiohttp DNS interceptor.

    The interceptor is useless on 127.0.0.1, and its patches must be undone in LIFO order, which
    emulators stopped from different threads (or tests) cannot guarantee.
    """

    async def __aenter__(self) -> Self:
        self._managed_server = self._server_cls(self.handler, host=self._host, port=self._port)
        await self._managed_server.__aenter__()
        self._managed_client = self._client_fct(self._managed_server.make_url("/"))
        await self._managed_client.__aenter__()
        self.handler.servers.append(self)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.handler.servers.remove(self)
        client, server = self._managed_client, self._managed_server
        self._managed_client = self._managed_server = None
        if client is not None:
            await client.__aexit__(exc_type, exc, tb)
        if server is not None:
            await server.__aexit__(exc_type, exc, tb)


class EmulatorThread:
    """Context manager: start the emulator in a thread with its own loop; ``.url`` once entered."""

    def __init__(self, *, gc: bool = True, namespaces: Iterable[str] = (), port: int | None = None) -> None:
        self.emulator = Emulator(gc=gc)
        self.namespaces = list(namespaces)
        self.kubeconfig: Path | None = None
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._kubelet: Kubelet | None = None
        self._kubelet_task: concurrent.futures.Future[None] | None = None
        self.url = ""

    # --- lifecycle ---------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> Self:
        """Start serving and return once the port answers."""
        self._thread = threading.Thread(target=self._run, name="k8s-emulator", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT) or self._failure is not None:
            self.stop()
            raise RuntimeError(f"the emulator did not start: {self._failure!r}")
        host, port = self.url.removeprefix("http://").rsplit(":", 1)
        wait_for_port(host, int(port), time.monotonic() + START_TIMEOUT)
        return self

    def stop(self) -> None:
        """Stop the kubelet's pods, close watches, stop the server and join the thread (bounded)."""
        loop, thread = self._loop, self._thread
        task, self._kubelet_task = self._kubelet_task, None
        if task is not None and self._kubelet is not None and loop is not None and not loop.is_closed():
            self.run(
                self._kubelet.stop(), timeout=KUBELET_STOP_TIMEOUT
            )  # every pod process is gone after this
            task.result(STOP_TIMEOUT)
        if loop is not None and self._stop is not None and not loop.is_closed():
            stop = self._stop
            loop.call_soon_threadsafe(self.emulator.close_watches)
            loop.call_soon_threadsafe(stop.set)
        if thread is not None:
            thread.join(STOP_TIMEOUT)
            if thread.is_alive():
                raise RuntimeError("the emulator thread did not stop in time")
        self._thread = None
        failure, self._failure = self._failure, None
        if failure is not None:
            raise RuntimeError(f"the emulator failed: {failure!r}") from failure

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to start(); the thread must not die silently
            self._failure = exc
        finally:
            self._ready.set()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        server = LoopbackServer(self.emulator, host="127.0.0.1", port=self._port)
        async with self.emulator, server:
            setup_cluster(self.emulator, self.namespaces)
            self.url = f"http://127.0.0.1:{server.port}"
            self._ready.set()
            await self._stop.wait()

    # --- running code on the emulator's loop ---------------------------------------------------------

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the emulator's loop (the store is not thread-safe) and return its result."""
        if self._thread is not None and threading.get_ident() == self._thread.ident:
            return fn()  # already on the loop (e.g. inside a wait_for predicate): waiting would deadlock
        return self.run(self._wrap(fn))

    def run(self, coro: Awaitable[T], timeout: float = STOP_TIMEOUT) -> T:
        """Run a coroutine on the emulator's loop and wait (bounded) for its result."""
        assert self._loop is not None, "the emulator is not running"
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(_as_coro(coro), self._loop)
        return future.result(timeout)

    @staticmethod
    async def _wrap(fn: Callable[[], T]) -> T:
        return fn()

    # --- helpers for tests ----------------------------------------------------------------------------

    def write_kubeconfig(self, path: Path | str, namespace: str = "default", token: str = "") -> Path:
        """Write a kubeconfig for this emulator (the first without a token is remembered as ``.kubeconfig``).

        The emulator authenticates nobody; a ``token`` only names the client in ``write_log()``.
        """
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.safe_dump(kubeconfig(self.url, namespace, token)), encoding="utf-8")
        if not token:
            self.kubeconfig = target
        return target

    def start_kubelet(self, root: Path) -> Kubelet:
        """Run clawplane's server pods as local processes (tests/k8s/kubelet.py) until ``stop()``."""
        from tests.k8s.kubelet import Kubelet

        assert self._loop is not None, "the emulator is not running"
        kubelet = Kubelet(self.emulator, root)
        self._kubelet = kubelet
        self._kubelet_task = asyncio.run_coroutine_threadsafe(kubelet.run(), self._loop)
        return kubelet

    def setup_cluster(self, *namespaces: str) -> None:
        """Create ``default`` and the given namespaces."""
        self.call(lambda: setup_cluster(self.emulator, namespaces))

    def get(self, plural: str, namespace: str | None, name: str) -> JSON | None:
        """The live object, or None."""
        return self.call(lambda: self._get(plural, namespace, name))

    def list(self, plural: str, namespace: str | None = None) -> Objects:
        """Live objects of a resource (all namespaces when ``namespace`` is None), sorted by ns/name."""
        return self.call(lambda: self.emulator._live_items(self._target(plural, namespace, None)))

    def history(self, plural: str, namespace: str | None, name: str) -> Versions:
        """Every stored version of an object, ``None`` marking deletions; [] if never seen."""
        return self.call(lambda: self._history(plural, namespace, name))

    def apply_object(self, obj: JSON) -> JSON:
        """Create ``obj``, or merge it into the existing one (server-side apply without managers)."""
        return self.call(lambda: self._apply(copy.deepcopy(obj)))

    def delete_object(self, plural: str, namespace: str | None, name: str) -> JSON | None:
        """DELETE semantics (finalizers honoured); None if there was nothing to delete."""
        return self.call(lambda: self._delete(plural, namespace, name))

    def wait_for(self, predicate: Callable[[], T | None], timeout: float = CONDITION_S) -> T:
        """Wait until ``predicate()`` (run on the emulator's loop after each change) is truthy."""
        return self.run(self.emulator.wait_for(predicate, timeout), timeout + STOP_TIMEOUT)

    def inject_conflicts(
        self, resource_plural: str, count: int, verbs: tuple[str, ...] = ("PUT", "PATCH")
    ) -> None:
        """See ``Emulator.inject_conflicts``."""
        self.emulator.inject_conflicts(resource_plural, count, verbs)

    def writes(self, resource_plural: str, namespace: str | None = None, name: str | None = None) -> Writes:
        """See ``Emulator.writes``."""
        return self.emulator.writes(resource_plural, namespace, name)

    def request_tally(self) -> Counter[tuple[str, str, str | None]]:
        """See ``Emulator.request_tally``."""
        return self.emulator.request_tally()

    def watches(self) -> list[tuple[str, str | None, str | None]]:
        """See ``Emulator.watches``."""
        return self.emulator.watches()

    def write_log(self) -> list[WriteRecord]:
        """See ``Emulator.write_log``."""
        return self.emulator.write_log()

    def partition(self, token: str, cut: bool = True) -> None:
        """See ``Emulator.partition`` (run on the emulator's loop: it wakes the watches)."""
        self.call(lambda: self.emulator.partition(token, cut))

    def clear_writes(self) -> None:
        """See ``Emulator.clear_writes``."""
        self.emulator.clear_writes()

    # --- loop-side implementations ---------------------------------------------------------------

    def _target(self, plural: str, namespace: str | None, name: str | None) -> Target:
        """Find a declared resource by plural (``plural.group`` disambiguates, e.g. ``events.events.k8s.io``)."""
        name_part, _, group = plural.partition(".")
        matches = [
            r for r in self.emulator.resources if r.plural == name_part and (not group or r.group == group)
        ]
        if not matches:
            raise KeyError(f"no declared resource {plural!r}")
        # Prefer the core group, then the first declared (kopf/kubectl do the same for bare plurals).
        res = sorted(matches, key=lambda r: (r.group != "", r.group))[0]
        info = self.emulator.resources[res]
        return Target(res, info, namespace if info.namespaced else None, name, None)

    def _get(self, plural: str, namespace: str | None, name: str) -> JSON | None:
        return self.emulator._live(self._target(plural, namespace, name).key())

    def _history(self, plural: str, namespace: str | None, name: str) -> Versions:
        key = self._target(plural, namespace, name).key()
        if key not in self.emulator.objects:
            return []
        return [None if v is None else copy.deepcopy(v.raw) for v in self.emulator.objects[key].history]

    def _apply(self, obj: JSON) -> JSON:
        meta = obj.get("metadata") or {}
        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        res = next(
            (
                r
                for r in self.emulator.resources
                if r.group == group
                and r.version == version
                and self.emulator.resources[r].kind == obj.get("kind")
            ),
            None,
        )
        if res is None:
            raise KeyError(f"no declared resource for {obj.get('apiVersion')} {obj.get('kind')}")
        info = self.emulator.resources[res]
        t = Target(res, info, meta.get("namespace") if info.namespaced else None, meta.get("name"), None)
        old = self.emulator._live(t.key())
        if old is None:
            t.name = None
            return self.emulator._create(t, obj)
        merged = o.merge_patch(old, obj)
        merged["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        return self.emulator._update(t, old, self.emulator._merge_endpoint(t, old, merged))

    def _delete(self, plural: str, namespace: str | None, name: str) -> JSON | None:
        t = self._target(plural, namespace, name)
        old = self.emulator._live(t.key())
        return None if old is None else self.emulator._delete_object(t, name, old)


async def _as_coro(awaitable: Awaitable[T]) -> T:
    return await awaitable
