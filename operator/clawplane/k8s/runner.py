"""Start-up and shutdown of the operator process: logging, metrics endpoint, kopf."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import kopf

from clawplane.k8s.kubeconfig import KubeConfigError, load_connection
from clawplane.k8s.operator import OperatorConfig, build_registry
from clawplane.k8s.reconciler import DEFAULT_SKILLS_MOUNT_PATH, ClusterSettings
from clawplane.reconcile.metrics import LoopMetrics, MetricsServer


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
        connection=partial(load_connection, options.kubeconfig),
        namespaces=options.namespaces,
    )


def run_operator(options: RunOptions) -> int:
    """Run until SIGTERM/SIGINT; returns the process exit code."""
    try:
        load_connection(options.kubeconfig)
        options.state_dir.mkdir(parents=True, exist_ok=True)
    except (KubeConfigError, OSError) as exc:
        print(f"clawplane k8s: {exc}", file=sys.stderr, flush=True)
        return 2
    kopf.configure(log_format=kopf.LogFormat.JSON if options.log_format == "json" else kopf.LogFormat.FULL)
    logging.getLogger("clawplane").setLevel(logging.INFO)
    config = operator_config(options)
    metrics_server = _metrics(config.metrics, options.metrics_port)
    try:
        kopf.run(
            registry=build_registry(config),
            standalone=True,
            clusterwide=not options.namespaces,
            namespaces=options.namespaces,
            liveness_endpoint=f"http://0.0.0.0:{options.health_port}/healthz"
            if options.health_port
            else None,
        )
    finally:
        if metrics_server is not None:
            metrics_server.stop()
    return 0


def _metrics(metrics: LoopMetrics, port: int) -> MetricsServer | None:
    if not port:
        return None
    server = MetricsServer(metrics, healthy=lambda: True, ready=lambda: True)
    server.start("0.0.0.0", port)
    return server
