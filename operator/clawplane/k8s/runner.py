"""Start-up and shutdown of the operator process: logging, metrics endpoint, leader election, kopf.

With leader election (the default), the process first waits as a standby until it holds the
Lease, and only then starts kopf: a standby runs no handler, timer or watch of kopf, so it
writes nothing. Losing the Lease fences the reconciler's writes at once, stops kopf and ends the
process with exit code 1 (as controller-runtime does), so Kubernetes restarts it as a standby.
A clean shutdown (SIGTERM) stops kopf first, then releases the Lease for an immediate takeover.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import kopf
from prometheus_client import Gauge

from clawplane._utils.private import make_private_dirs
from clawplane.k8s.adapter.reconciler import CRD_KINDS, DEFAULT_SKILLS_MOUNT_PATH, ClusterSettings
from clawplane.k8s.admission.settings import WebhookOptions
from clawplane.k8s.api.kubeapi import ApiError, KubeApi
from clawplane.k8s.api.kubeconfig import Connection, KubeConfigError, load_connection
from clawplane.k8s.dashboard import GENERATED_UI_TOKEN_FILE, DashboardOptions, dashboard_tokens
from clawplane.k8s.ha.election import ElectionSettings, LeaderElector
from clawplane.k8s.ha.shards import NAMESPACES
from clawplane.k8s.metricsauth import FileToken, MetricsAuthError, generated_token_file, metrics_guard
from clawplane.k8s.operator import OperatorConfig, build_registry
from clawplane.reconcile.metrics import LoopMetrics, MetricsServer

if TYPE_CHECKING:
    from clawplane.k8s.admission.server import WebhookService

log = logging.getLogger("clawplane.k8s")
LOST_LEADERSHIP_EXIT = 1


@dataclass(frozen=True)
class UiOptions:
    """``--ui-*``: the dashboard of one namespace (``k8s/dashboard.py``)."""

    port: int = 0
    """0: no dashboard."""
    namespace: str | None = None
    bind: str = "127.0.0.1"
    token_file: Path | None = None
    reader_token_file: Path | None = None
    allowed_hosts: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RunOptions:
    """What ``clawplane k8s run`` was asked to do."""

    namespaces: tuple[str, ...]
    state_dir: Path
    bridge_image: str
    metrics_port: int = 9090
    health_port: int = 8081
    resync_interval: float = 300.0
    concurrency: int = 8
    log_format: str = "text"
    kubeconfig: str | None = None
    bridge_ingress_from: tuple[dict[str, Any], ...] = ()
    skills_mount_path: str = DEFAULT_SKILLS_MOUNT_PATH
    election: ElectionSettings | None = None
    """Leader election on a Lease; None runs unelected (exactly one replica)."""
    namespace_selector: str | None = None
    """Reconcile only the namespaces with these labels (sharding)."""
    metrics_bind: str = "127.0.0.1"
    metrics_token_file: Path | None = None
    """The token ``/metrics`` requires; None: one generated into the state dir."""
    metrics_allowed_hosts: frozenset[str] = frozenset()
    ui: UiOptions = field(default_factory=UiOptions)
    webhook: WebhookOptions | None = None
    """The validating admission webhook (served by every replica); None: off."""


def operator_config(options: RunOptions) -> OperatorConfig:
    """The handlers' configuration for ``options``."""
    settings = ClusterSettings(
        state_dir=options.state_dir,
        bridge_image=options.bridge_image,
        concurrency=options.concurrency,
        bridge_ingress_from=options.bridge_ingress_from,
        skills_mount_path=options.skills_mount_path,
    )
    return OperatorConfig(
        settings,
        resync_interval=options.resync_interval,
        connection=partial(identified_connection, options.kubeconfig, agent_of(options)),
        namespaces=options.namespaces,
        dashboard=_dashboard(options),
        namespace_selector=options.namespace_selector,
    )


def agent_of(options: RunOptions) -> str:
    """This process among the operator's replicas and shards, for the User-Agent of its requests."""
    replica = options.election.identity if options.election is not None else socket.gethostname()
    parts = [f"replica={replica}"]
    if options.namespace_selector:
        parts.append(f"shard={options.namespace_selector}")
    return "; ".join(parts)


def identified_connection(kubeconfig: str | None, agent: str) -> Connection:
    """The kubeconfig's connection, its requests naming this replica and shard."""
    return replace(load_connection(kubeconfig), agent=agent)


def _dashboard(options: RunOptions) -> DashboardOptions | None:
    """The dashboard's options, its token file generated if none was given; None: no dashboard."""
    ui = options.ui
    if not ui.port:
        return None
    namespace = ui.namespace or (options.namespaces[0] if options.namespaces else None)
    if namespace is None:
        namespace = load_connection(options.kubeconfig).namespace
    token_file = ui.token_file
    if token_file is None:
        token_file = generated_token_file(options.state_dir, GENERATED_UI_TOKEN_FILE)
        log.info("the dashboard's token is in %s", token_file)
    found = DashboardOptions(
        namespace, token_file, ui.reader_token_file, ui.bind, ui.port,
        frozenset(h.strip().lower().strip("[]") for h in ui.allowed_hosts if h.strip()),
    )  # fmt: skip
    dashboard_tokens(found)  # a bad token file fails at start-up, with its cause
    return found


def run_operator(options: RunOptions) -> int:
    """Run until SIGTERM/SIGINT; returns the process exit code."""
    try:
        load_connection(options.kubeconfig).ssl_context()  # the TLS material too: fail here, with its cause
        make_private_dirs(options.state_dir)
        given = options.metrics_token_file
        if options.metrics_port and (given is None or not given.exists()):
            # An optional Secret volume that is not there yet (plain manifests): still a token, ours.
            options = replace(options, metrics_token_file=generated_token_file(options.state_dir))
            if given is not None:
                log.warning(
                    "no /metrics token at %s (is the Secret missing?); using a generated one in %s: "
                    "create the Secret (key token) and restart to scrape with it",
                    given,
                    options.metrics_token_file,
                )
            log.info("the /metrics token is in %s", options.metrics_token_file)
        if options.metrics_port:
            assert options.metrics_token_file is not None
            FileToken(options.metrics_token_file)  # a bad token file fails here, with its cause
        config = operator_config(options)
    except (KubeConfigError, OSError, MetricsAuthError) as exc:
        print(f"clawplane k8s: {exc}", file=sys.stderr, flush=True)
        return 2
    if options.namespace_selector:
        problem = asyncio.run(_selector_problem(options))
        if problem is not None:
            print(
                f"clawplane k8s: --namespace-selector {options.namespace_selector!r}: {problem}",
                file=sys.stderr,
            )
            return 2
    kopf.configure(log_format=kopf.LogFormat.JSON if options.log_format == "json" else kopf.LogFormat.FULL)
    logging.getLogger("clawplane").setLevel(logging.INFO)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per API call drowns the log
    webhook = _webhook(options, config)
    try:
        return _run(options, config)
    finally:
        if webhook is not None:
            webhook.stop()


def _webhook(options: RunOptions, config: OperatorConfig) -> WebhookService | None:
    """Start the admission webhook (before any election: standbys answer reviews too)."""
    if options.webhook is None:
        return None
    from clawplane.k8s.admission.server import WebhookService  # aiohttp: only when asked for

    settings = replace(options.webhook, namespaces=options.namespaces, selector=options.namespace_selector)
    service = WebhookService(settings, config.connection, list(CRD_KINDS.values()), options.state_dir)
    service.start()
    return service


def _run(options: RunOptions, config: OperatorConfig) -> int:
    election = options.election
    if election is None:
        metrics_server = _metrics(config.metrics, options)
        try:
            kopf.run(**_kopf_arguments(options, config))
        finally:
            if metrics_server is not None:
                metrics_server.stop()
        return 0
    connection = config.connection()
    if not election.namespace:
        election = replace(election, namespace=connection.namespace)
        options = replace(options, election=election)
    elector = LeaderElector(KubeApi(connection, timeout=election.renew_deadline), election)
    leader = Gauge(
        "clawplane_leader",
        "1 while this replica holds the leader Lease, else 0",
        registry=config.metrics.registry,
    )
    leader.set_function(lambda: 1.0 if elector.leading else 0.0)
    metrics_server = _metrics(config.metrics, options, elector)
    try:
        return asyncio.run(_run_elected(options, replace(config, write_fence=elector.fence), elector))
    finally:
        if metrics_server is not None:
            metrics_server.stop()


async def _selector_problem(options: RunOptions) -> str | None:
    """Why the API server refuses the selector (a malformed one is a 400), or None."""
    api = KubeApi(load_connection(options.kubeconfig))
    try:
        await api.list(NAMESPACES, None, labels=options.namespace_selector)
    except ApiError as exc:
        return str(exc) if exc.status == 400 else None  # other failures: kopf's own retries apply
    except httpx.HTTPError:
        return None
    finally:
        await api.aclose()
    return None


def _kopf_arguments(options: RunOptions, config: OperatorConfig) -> dict[str, Any]:
    return {
        "registry": build_registry(config),
        "standalone": True,
        "clusterwide": not options.namespaces,
        "namespaces": options.namespaces,
        # kopf's endpoint has no Host or token check: loopback only (the kubelet probes the metrics port).
        "liveness_endpoint": f"http://127.0.0.1:{options.health_port}/healthz"
        if options.health_port
        else None,
    }


async def _run_elected(options: RunOptions, config: OperatorConfig, elector: LeaderElector) -> int:
    """Standby until the Lease is ours, then kopf until a signal (release) or the Lease is lost (exit 1)."""
    assert options.election is not None
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    try:
        acquiring = asyncio.create_task(elector.acquire())
        stop_wait = asyncio.create_task(stopping.wait())
        await asyncio.wait({acquiring, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
        if not acquiring.done():  # stopped while standby: nothing to release
            acquiring.cancel()
            await asyncio.gather(acquiring, return_exceptions=True)
            return 0
        # Created before kopf starts, so kopf's shutdown leaves these tasks alone.
        holding = asyncio.create_task(elector.hold())
        kopf_stop = asyncio.Event()
        holding.add_done_callback(lambda _: kopf_stop.set())
        stop_wait.add_done_callback(lambda _: kopf_stop.set())  # a signal before kopf installs its own
        operator = asyncio.create_task(kopf.operator(**_kopf_arguments(options, config), stop_flag=kopf_stop))
        await asyncio.wait({operator, holding}, return_when=asyncio.FIRST_COMPLETED)
        if holding.done():
            return await _stop_deposed(operator, options.election)
        holding.cancel()
        stop_wait.cancel()
        await asyncio.gather(holding, stop_wait, return_exceptions=True)
        failure = operator.exception()
        await elector.release()  # kopf has stopped: nothing of ours writes any more
        if failure is not None:
            raise failure
        return 0
    finally:
        await elector.api.aclose()


async def _stop_deposed(operator: asyncio.Task[None], election: ElectionSettings) -> int:
    """Leadership lost: writes are fenced already; give kopf until a standby may lead, then exit 1."""
    margin = max(election.lease_duration - election.renew_deadline, 0.5)
    done, _ = await asyncio.wait({operator}, timeout=margin)
    if not done:
        log.error("kopf did not stop within %.1fs of losing the Lease; exiting now", margin)
        logging.shutdown()
        os._exit(LOST_LEADERSHIP_EXIT)
    log.error(
        "stopped reconciling after losing the leader Lease; exiting so that the pod restarts as a standby"
    )
    return LOST_LEADERSHIP_EXIT


def _metrics(
    metrics: LoopMetrics, options: RunOptions, elector: LeaderElector | None = None
) -> MetricsServer | None:
    if not options.metrics_port:
        return None
    assert options.metrics_token_file is not None
    role = None if elector is None else (lambda: "leader" if elector.leading else "standby")
    guard = metrics_guard(options.metrics_bind, options.metrics_token_file, options.metrics_allowed_hosts)
    hint = f"the token in {options.metrics_token_file}"
    server = MetricsServer(
        metrics, healthy=lambda: True, ready=lambda: True, role=role, guard=guard, token_hint=hint
    )
    try:
        server.start(options.metrics_bind, options.metrics_port)
    except OSError as exc:
        raise SystemExit(
            f"clawplane k8s: cannot listen on {options.metrics_bind}:{options.metrics_port} for metrics: "
            f"{exc.strerror or exc}; pick another --metrics-port or --metrics-bind-address"
        ) from None
    return server
