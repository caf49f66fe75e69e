"""The kopf adapter: events in, namespace passes out. No reconcile logic lives here.

Handlers only decide *which namespace* needs a pass: custom resources whose spec,
restart annotation or deletion changed (kopf), and children or referenced Secrets that
changed in namespaces clawplane manages (``watches.Watches``, filtered by the API server).
Deletion waits for a pass that removed what the resource owned, then kopf drops the finalizer.
With ``dashboard`` set, one namespace's dashboard is served from start-up to cleanup.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import kopf

from clawplane.k8s.adapter.approvals import APPROVE_ANNOTATION, REJECT_ANNOTATION
from clawplane.k8s.adapter.hub import Hub
from clawplane.k8s.adapter.reconciler import CRD_KINDS, ClusterSettings, NamespaceReconciler
from clawplane.k8s.api.kubeapi import KubeApi
from clawplane.k8s.api.kubeconfig import Connection, load_connection
from clawplane.k8s.dashboard import DashboardOptions, serve_dashboard
from clawplane.k8s.ha.shards import NamespaceSelection
from clawplane.k8s.objects.childcache import ChildCache
from clawplane.k8s.objects.children import RESTART_ANNOTATION
from clawplane.k8s.objects.watches import OwnWrites, Watches
from clawplane.reconcile.metrics import LoopMetrics

FINALIZER = "clawplane.dev/finalizer"
DELETE_WAIT_SECONDS = 120.0
HELD_RETRY_SECONDS = 10.0
"""How often a held delete looks again (an annotation answering it also triggers a pass)."""


@dataclass
class OperatorConfig:
    """Everything the handlers need, fixed at start-up."""

    settings: ClusterSettings
    resync_interval: float = 300.0
    connection: Callable[[], Connection] = load_connection
    metrics: LoopMetrics = field(default_factory=LoopMetrics)
    namespaces: tuple[str, ...] = ()
    """The watched namespaces (as given to kopf); empty: all of them."""
    write_fence: Callable[[], str | None] | None = None
    """Asked before every write of the reconciler (leader election: a reason refuses it)."""
    dashboard: DashboardOptions | None = None
    """Serve the dashboard of one namespace (None: no dashboard)."""
    namespace_selector: str | None = None
    """Reconcile only namespaces with these labels (sharding); None: every watched namespace."""


@dataclass
class _State:
    hub: Hub | None = None
    api: KubeApi | None = None
    resync: asyncio.Task[None] | None = None
    watches: Watches | None = None
    dashboard: asyncio.Task[None] | None = None
    dashboard_stop: asyncio.Event = field(default_factory=asyncio.Event)
    seen: dict[tuple[str, str, str], tuple[Any, ...]] = field(default_factory=dict)
    selection: NamespaceSelection | None = None
    selecting: asyncio.Task[None] | None = None

    def admits(self, namespace: str | None) -> bool:
        """Whether this operator's shard holds ``namespace``."""
        return bool(namespace) and (self.selection is None or namespace in self.selection)


def _fingerprint(body: Any) -> tuple[Any, ...]:
    meta = body.get("metadata", {})
    annotations = meta.get("annotations") or {}
    return (
        meta.get("generation"),
        annotations.get(RESTART_ANNOTATION),
        bool(meta.get("deletionTimestamp")),
        annotations.get(APPROVE_ANNOTATION),  # an answer to a held action needs a pass
        annotations.get(REJECT_ANNOTATION),
    )


class NoDiffBase(kopf.DiffBaseStorage):
    """kopf keeps no "last handled" copy of each resource: nothing of ours reads one.

    The handlers are ``on.event`` (which compares a fingerprint in memory) and ``on.delete``
    (found by the deletion mark), so a stored diff base would only cost one more PATCH of
    every new resource, and a watch event for it, before the first pass can settle.
    """

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        """Never a stored essence (kopf then sees creations, for which nothing is registered)."""
        return None

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: kopf.BodyEssence) -> None:
        """Store nothing: the patch stays empty."""


def finalizer(namespace_selector: str | None = None) -> str:
    """The finalizer this operator puts on resources: one per shard.

    kopf removes its finalizer from resources its deletion handler does not match, so shards
    sharing one name would take each other's off, over and over.
    """
    if not namespace_selector:
        return FINALIZER
    return f"{FINALIZER}-{hashlib.sha256(namespace_selector.encode()).hexdigest()[:10]}"


def configure(settings: kopf.OperatorSettings, namespace_selector: str | None = None) -> None:
    """kopf settings: our finalizer, progress kept in annotations (``.status`` is ours alone)."""
    settings.persistence.finalizer = finalizer(namespace_selector)
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix="clawplane.dev")
    settings.persistence.diffbase_storage = NoDiffBase()
    settings.posting.level = logging.WARNING
    settings.watching.server_timeout = 300
    settings.networking.error_backoffs = [1, 2, 5, 10]


def build_registry(config: OperatorConfig) -> kopf.OperatorRegistry:
    """A kopf registry whose handlers drive ``Hub`` passes."""
    registry = kopf.OperatorRegistry()
    state = _State()

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        conn = config.connection()
        return kopf.ConnectionInfo(
            server=conn.server,
            ca_path=conn.ca_file,
            ca_data=conn.ca_data,
            insecure=conn.insecure,
            token=conn.token,
            scheme="Bearer" if conn.token else None,
            certificate_path=conn.cert_file,
            certificate_data=conn.cert_data,
            private_key_path=conn.key_file,
            private_key_data=conn.key_data,
            default_namespace=conn.namespace,
        )

    @kopf.on.startup(registry=registry)
    async def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
        configure(settings, config.namespace_selector)
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per API call drowns the log
        state.api = KubeApi(config.connection(), write_fence=config.write_fence)
        api = state.api
        own = OwnWrites()
        cache = ChildCache()
        hub = Hub(
            lambda ns: NamespaceReconciler(api, ns, config.settings, own=own, cache=cache), config.metrics
        )
        state.hub = hub
        state.watches = Watches(
            api,
            hub.poke_known,
            own,
            namespaces=config.namespaces,
            referenced=hub.referenced_secrets,
            cache=cache,
        )
        hub.on_new_namespace = state.watches.manage
        if config.namespace_selector:
            await _select(state, hub, api, config.namespace_selector)
        state.watches.start()
        state.resync = asyncio.create_task(hub.resync(config.resync_interval))
        if config.dashboard is not None:
            worker = hub.worker(config.dashboard.namespace)
            worker.poke()  # a first pass even before any resource changes
            state.dashboard = asyncio.create_task(
                serve_dashboard(config.dashboard, worker, state.dashboard_stop), name="clawplane-dashboard"
            )

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        if state.dashboard is not None:
            state.dashboard_stop.set()
            await asyncio.gather(state.dashboard, return_exceptions=True)
        if state.selecting is not None:
            state.selecting.cancel()
        if state.resync is not None:
            state.resync.cancel()
        if state.watches is not None:
            await state.watches.stop()
        if state.hub is not None:
            await state.hub.stop()
        if state.api is not None:
            await state.api.aclose()

    def hub() -> Hub:
        assert state.hub is not None, "startup handler has not run"
        return state.hub

    for kind in CRD_KINDS.values():
        _register_kind(registry, kind.group, kind.version, kind.plural, state, hub)

    return registry


SELECTION_TIMEOUT = 60.0


async def _select(state: _State, hub: Hub, api: KubeApi, selector: str) -> None:
    """Start the namespace selection and wait for its first list (kopf's watches start after this)."""

    def added(namespace: str) -> None:
        hub.poke(namespace)

    selection = NamespaceSelection(selector, on_added=added, on_removed=hub.forget)
    state.selection = selection
    hub.admits = state.admits
    state.selecting = asyncio.create_task(selection.run(api), name="clawplane-namespace-selection")
    # Until the list is in, every namespace would look foreign, and kopf would drop our finalizers.
    listed = asyncio.create_task(selection.listed.wait())
    await asyncio.wait(
        {listed, state.selecting}, timeout=SELECTION_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
    )
    if not selection.listed.is_set():
        listed.cancel()
        failed = state.selecting.exception() if state.selecting.done() else None
        cause = f": {failed}" if failed is not None else f" within {SELECTION_TIMEOUT:.0f}s"
        raise kopf.PermanentError(f"cannot list the namespaces of --namespace-selector {selector!r}{cause}")


def _register_kind(
    registry: kopf.OperatorRegistry,
    group: str,
    version: str,
    plural: str,
    state: _State,
    hub: Callable[[], Hub],
) -> None:
    @kopf.on.event(group, version, plural, registry=registry, id="changed")
    async def changed(type: str, body: Any, namespace: str | None, name: str, **_: Any) -> None:
        if not namespace or not state.admits(namespace):
            return
        key = (plural, namespace, name)
        if type == "DELETED":
            state.seen.pop(key, None)
            hub().poke(namespace)
            return
        fingerprint = _fingerprint(body)
        if state.seen.get(key) != fingerprint:  # status-only writes (ours) need no pass
            state.seen[key] = fingerprint
            hub().poke(namespace)

    # An explicit id: kopf keeps a retried handler's progress in an annotation named after it,
    # and the default one (``_register_kind.<locals>.deleted``) is not a valid annotation name.
    # The filter also decides the finalizer: a shard puts it only on the resources it reconciles.
    @kopf.on.delete(
        group,
        version,
        plural,
        registry=registry,
        id="cleanup",
        when=lambda namespace, **_: state.admits(namespace),
    )
    async def deleted(body: Any, namespace: str | None, name: str, **_: Any) -> None:
        if not namespace:
            return
        worker = hub().worker(namespace)
        result = await worker.wait(worker.poke(), DELETE_WAIT_SECONDS)
        key = f"{body['kind']}/{name}"
        outcome = result.results.get(key, "ok") if result is not None else ""
        if result is not None and not result.error and outcome.startswith("held: "):
            # The delete waits for an approval: the finalizer stays until it is answered.
            raise kopf.TemporaryError(outcome, delay=HELD_RETRY_SECONDS)
        if result is None or result.error or outcome != "ok":
            detail = (result.results.get(key) or result.error) if result else "no pass ran"
            raise kopf.TemporaryError(f"cleanup of {key} failed: {detail}", delay=5)
