"""``clawplane k8s run``: the Kubernetes operator (``k8s.runner.run_operator``).

Every option keeps the name, default and environment fallback it had as an argparse program;
kopf and the engine are imported only when the operator starts, so ``--help`` stays instant.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from clawplane.k8s.options import DEFAULT_IMAGE, DEFAULT_LEASE_NAME

__all__ = ["k8s_app"]

k8s_app = typer.Typer(
    name="k8s",
    help="Run clawplane as a Kubernetes operator.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

WEBHOOK = "Admission webhook (clawplane's diagnostics at kubectl apply time)"
ELECTION = "Leader election (several replicas: only the Lease holder reconciles)"
DASHBOARD = "Dashboard"


class LogFormat(StrEnum):
    """``--log-format``."""

    TEXT = "text"
    JSON = "json"


class FailurePolicy(StrEnum):
    """``--webhook-failure-policy``."""

    IGNORE = "Ignore"
    FAIL = "Fail"


@k8s_app.command("run")
def run(
    all_namespaces: Annotated[
        bool, typer.Option("--all-namespaces", "-A", help="Watch every namespace (default).")
    ] = False,
    namespace: Annotated[
        list[str] | None, typer.Option("--namespace", "-n", help="Watch this namespace (repeatable).")
    ] = None,
    namespace_selector: Annotated[
        str | None,
        typer.Option(
            "--namespace-selector",
            metavar="SELECTOR",
            help="Reconcile only namespaces whose labels match this label selector (e.g. "
            "clawplane.dev/shard=a), so several operator deployments split the cluster; each needs its "
            "own --leader-election-id.",
        ),
    ] = None,
    state_dir: Annotated[
        Path, typer.Option("--state-dir", envvar="CLAWPLANE_STATE_DIR", help="State directory.")
    ] = Path("/var/lib/clawplane"),
    bridge_image: Annotated[
        str,
        typer.Option(
            "--bridge-image",
            envvar="CLAWPLANE_BRIDGE_IMAGE",
            help="Image for stdio server pods (must contain clawplane).",
        ),
    ] = DEFAULT_IMAGE,
    metrics_port: Annotated[
        int, typer.Option("--metrics-port", help="Port for /metrics, /healthz, /readyz (0: off).")
    ] = 9090,
    metrics_bind_address: Annotated[
        str,
        typer.Option(
            "--metrics-bind-address",
            metavar="ADDRESS",
            help="Address of the metrics/probe listener (default: loopback; the chart gives 0.0.0.0 "
            "because the kubelet probes the pod IP).",
        ),
    ] = "127.0.0.1",
    metrics_token_file: Annotated[
        Path | None,
        typer.Option(
            "--metrics-token-file",
            metavar="PATH",
            help="File with the bearer token /metrics requires (re-read on change; default: one generated "
            "into STATE_DIR/metrics-token). /healthz and /readyz need none.",
        ),
    ] = None,
    metrics_allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--metrics-allowed-host",
            metavar="HOST",
            help="Host header the metrics listener accepts on a non-loopback address "
            "(repeatable; none: any).",
        ),
    ] = None,
    ui_port: Annotated[
        int,
        typer.Option(
            "--ui-port",
            metavar="PORT",
            rich_help_panel=DASHBOARD,
            help="Serve the dashboard (/ui) of one namespace on this port (0: off, the default).",
        ),
    ] = 0,
    ui_namespace: Annotated[
        str | None,
        typer.Option(
            "--ui-namespace",
            metavar="NAMESPACE",
            rich_help_panel=DASHBOARD,
            help="The namespace the dashboard shows (default: the first -n, else the kubeconfig's).",
        ),
    ] = None,
    ui_bind_address: Annotated[
        str,
        typer.Option(
            "--ui-bind-address",
            metavar="ADDRESS",
            rich_help_panel=DASHBOARD,
            help="Address of the dashboard (default: loopback; reach it with kubectl port-forward).",
        ),
    ] = "127.0.0.1",
    ui_token_file: Annotated[
        Path | None,
        typer.Option(
            "--ui-token-file",
            metavar="PATH",
            rich_help_panel=DASHBOARD,
            help="File with the token that logs in to look and answer approvals (re-read on change; "
            "default: one generated into STATE_DIR/ui-token).",
        ),
    ] = None,
    ui_reader_token_file: Annotated[
        Path | None,
        typer.Option(
            "--ui-reader-token-file",
            metavar="PATH",
            rich_help_panel=DASHBOARD,
            help="File with a token that logs in to look only.",
        ),
    ] = None,
    ui_allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--ui-allowed-host",
            metavar="HOST",
            rich_help_panel=DASHBOARD,
            help="Host header the dashboard accepts on a non-loopback address (repeatable; none: any).",
        ),
    ] = None,
    health_port: Annotated[
        int, typer.Option("--health-port", help="Port for kopf's liveness /healthz on loopback (0: off).")
    ] = 8081,
    resync_interval: Annotated[
        float, typer.Option("--resync-interval", help="Seconds between full resyncs.")
    ] = 300.0,
    concurrency: Annotated[
        int, typer.Option("--concurrency", help="Servers applied in parallel per namespace.")
    ] = 8,
    log_format: Annotated[LogFormat, typer.Option("--log-format", help="Log lines as text or JSON.")] = (
        LogFormat.TEXT
    ),
    kubeconfig: Annotated[
        str | None,
        typer.Option("--kubeconfig", help="Kubeconfig file (default: in-cluster, then $KUBECONFIG)."),
    ] = None,
    skills_mount_path: Annotated[
        str,
        typer.Option(
            "--skills-mount-path",
            envvar="CLAWPLANE_SKILLS_MOUNT_PATH",
            help="Where gateway pods mount the published skills (ConfigMap clawplane-skills-<gateway>): "
            "prompt locations point there. The operator writes inline skills under it, so it must be "
            "writable.",
        ),
    ] = "/var/run/clawplane/skills",
    bridge_ingress_from: Annotated[
        str | None,
        typer.Option(
            "--bridge-ingress-from",
            envvar="CLAWPLANE_BRIDGE_INGRESS_FROM",
            metavar="JSON",
            help="NetworkPolicy peers that may reach server pods (default: pods labelled "
            "clawplane.dev/gateway and the operator); 'none' writes no NetworkPolicy.",
        ),
    ] = None,
    leader_elect: Annotated[
        bool,
        typer.Option(
            "--leader-elect/--no-leader-elect",
            rich_help_panel=ELECTION,
            help="Hold a coordination.k8s.io/v1 Lease before reconciling (default: on). "
            "--no-leader-elect is safe only when exactly one operator runs.",
        ),
    ] = True,
    leader_election_id: Annotated[
        str, typer.Option("--leader-election-id", rich_help_panel=ELECTION, help="Name of the Lease.")
    ] = DEFAULT_LEASE_NAME,
    leader_election_namespace: Annotated[
        str,
        typer.Option(
            "--leader-election-namespace",
            envvar="POD_NAMESPACE",
            rich_help_panel=ELECTION,
            help="Namespace of the Lease (default: $POD_NAMESPACE, else the kubeconfig's namespace).",
        ),
    ] = "",
    leader_elect_lease_duration: Annotated[
        float,
        typer.Option(
            "--leader-elect-lease-duration",
            metavar="SECONDS",
            rich_help_panel=ELECTION,
            help="How long standbys wait after the last renewal they saw before taking over (whole seconds).",
        ),
    ] = 15.0,
    leader_elect_renew_deadline: Annotated[
        float,
        typer.Option(
            "--leader-elect-renew-deadline",
            metavar="SECONDS",
            rich_help_panel=ELECTION,
            help="How long the leader keeps trying to renew before it stops reconciling.",
        ),
    ] = 10.0,
    leader_elect_retry_period: Annotated[
        float,
        typer.Option(
            "--leader-elect-retry-period",
            metavar="SECONDS",
            rich_help_panel=ELECTION,
            help="Interval of renewals and of a standby's attempts.",
        ),
    ] = 2.0,
    webhook_port: Annotated[
        int,
        typer.Option(
            "--webhook-port",
            metavar="PORT",
            rich_help_panel=WEBHOOK,
            help="Serve the validating webhook here (0: off).",
        ),
    ] = 0,
    webhook_bind_address: Annotated[
        str,
        typer.Option(
            "--webhook-bind-address",
            metavar="ADDRESS",
            rich_help_panel=WEBHOOK,
            help="Address of the webhook (default: loopback; the chart gives 0.0.0.0 behind its Service).",
        ),
    ] = "127.0.0.1",
    webhook_service: Annotated[
        str | None,
        typer.Option(
            "--webhook-service",
            metavar="NAME",
            rich_help_panel=WEBHOOK,
            help="The Service in the operator's namespace the API server calls (in a cluster).",
        ),
    ] = None,
    webhook_url: Annotated[
        str | None,
        typer.Option(
            "--webhook-url",
            metavar="URL",
            rich_help_panel=WEBHOOK,
            help="The https://host:port the API server calls instead (an API server outside the cluster).",
        ),
    ] = None,
    webhook_service_port: Annotated[
        int,
        typer.Option(
            "--webhook-service-port",
            metavar="PORT",
            rich_help_panel=WEBHOOK,
            help="The port of --webhook-service.",
        ),
    ] = 443,
    webhook_configuration: Annotated[
        str,
        typer.Option(
            "--webhook-configuration",
            metavar="NAME",
            rich_help_panel=WEBHOOK,
            help="The ValidatingWebhookConfiguration the operator keeps (one per installation).",
        ),
    ] = "clawplane",
    webhook_secret: Annotated[
        str,
        typer.Option(
            "--webhook-secret",
            metavar="NAME",
            rich_help_panel=WEBHOOK,
            help="The Secret (operator's namespace) holding the webhook's CA and certificate, "
            "renewed when due.",
        ),
    ] = "clawplane-webhook-tls",
    webhook_failure_policy: Annotated[
        FailurePolicy,
        typer.Option(
            "--webhook-failure-policy",
            rich_help_panel=WEBHOOK,
            help="What the API server does when the webhook cannot answer (default Ignore: the CRDs' own "
            "checks still apply and the operator reports Invalid objects; Fail: refuse every change "
            "meanwhile).",
        ),
    ] = FailurePolicy.IGNORE,
    webhook_timeout: Annotated[
        int,
        typer.Option(
            "--webhook-timeout",
            metavar="SECONDS",
            rich_help_panel=WEBHOOK,
            help="The API server's wait (1-30).",
        ),
    ] = 5,
) -> None:
    """Watch clawplane resources and converge the cluster."""
    from clawplane.k8s.options import (
        OptionsError,
        WebhookArgs,
        election_settings,
        ingress,
        webhook_options,
    )
    from clawplane.k8s.options import namespace_selector as checked_selector

    namespaces = namespace or []
    if all_namespaces and namespaces:
        raise typer.BadParameter("not allowed with --all-namespaces", param_hint="'-n' / '--namespace'")
    if webhook_service is not None and webhook_url is not None:
        raise typer.BadParameter("not allowed with --webhook-service", param_hint="'--webhook-url'")
    try:
        selector = checked_selector(namespace_selector, namespaces)
        peers = ingress(bridge_ingress_from)
        election = election_settings(
            leader_elect, leader_election_namespace, leader_election_id,
            leader_elect_lease_duration, leader_elect_renew_deadline, leader_elect_retry_period,
        )  # fmt: skip
        webhook = webhook_options(
            WebhookArgs(
                webhook_port, webhook_bind_address, webhook_service, webhook_url, webhook_service_port,
                webhook_configuration, webhook_secret, webhook_failure_policy.value, webhook_timeout,
            )
        )  # fmt: skip
    except OptionsError as exc:
        print(f"clawplane k8s: {exc}", file=sys.stderr)
        raise typer.Exit(1) from None
    # Imported here: kopf and the engine are heavy, and `--help` should stay instant.
    from clawplane.k8s.runner import RunOptions, UiOptions, run_operator

    options = RunOptions(
        bridge_ingress_from=tuple(peers),
        skills_mount_path=skills_mount_path,
        namespaces=tuple(namespaces),
        namespace_selector=selector,
        state_dir=state_dir,
        bridge_image=bridge_image,
        metrics_port=metrics_port,
        metrics_bind=metrics_bind_address,
        metrics_token_file=metrics_token_file,
        metrics_allowed_hosts=frozenset(metrics_allowed_host or ()),
        ui=UiOptions(
            port=ui_port,
            namespace=ui_namespace,
            bind=ui_bind_address,
            token_file=ui_token_file,
            reader_token_file=ui_reader_token_file,
            allowed_hosts=frozenset(ui_allowed_host or ()),
        ),
        health_port=health_port,
        resync_interval=resync_interval,
        concurrency=concurrency,
        log_format=log_format.value,
        kubeconfig=kubeconfig,
        election=election,
        webhook=webhook,
    )
    raise typer.Exit(run_operator(options))
