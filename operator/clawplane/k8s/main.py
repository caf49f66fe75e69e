"""``clawplane k8s run``: the Kubernetes operator's command line (argparse: the CLI layer is separate)."""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import uuid
from pathlib import Path

from clawplane import __version__
from clawplane.k8s.admission.settings import Target, WebhookOptions
from clawplane.k8s.ha.election import DEFAULT_LEASE_NAME, ElectionError, ElectionSettings

DEFAULT_IMAGE = f"ghcr.io/clawplane/clawplane:{__version__}"
GATEWAY_PODS: dict[str, object] = {
    "podSelector": {"matchExpressions": [{"key": "clawplane.dev/gateway", "operator": "Exists"}]}
}
"""The default peer of a bridge pod's NetworkPolicy: pods labelled ``clawplane.dev/gateway`` (any value)."""


def default_ingress() -> list[dict[str, object]]:
    """Gateway pods in the server's namespace, and the operator's own pods (for tool discovery)."""
    peers: list[dict[str, object]] = [GATEWAY_PODS]
    namespace = os.environ.get("POD_NAMESPACE")
    if namespace:
        peers.append(
            {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                "podSelector": {"matchLabels": {"app.kubernetes.io/component": "operator"}},
            }
        )
    return peers


def _ingress(text: str | None) -> list[dict[str, object]]:
    """``--bridge-ingress-from``: a JSON list of NetworkPolicy peers, ``none``, or unset (the default)."""
    if text is None:
        return default_ingress()
    if text.strip().lower() == "none":
        return []
    try:
        peers = json.loads(text)
    except ValueError as exc:
        raise SystemExit(f"clawplane k8s: --bridge-ingress-from is not JSON ({exc}); give a list") from None
    if not isinstance(peers, list) or not all(isinstance(p, dict) and p for p in peers):
        raise SystemExit("clawplane k8s: --bridge-ingress-from must be a JSON list of NetworkPolicy peers")
    return peers


def parser() -> argparse.ArgumentParser:
    """The ``clawplane k8s`` argument parser."""
    p = argparse.ArgumentParser(prog="clawplane k8s", description="Run clawplane as a Kubernetes operator.")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="Watch clawplane resources and converge the cluster.")
    scope = run.add_mutually_exclusive_group()
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="Watch every namespace (default).")
    scope.add_argument(
        "-n", "--namespace", action="append", default=[], help="Watch this namespace (repeatable)."
    )
    run.add_argument(
        "--namespace-selector",
        default=None,
        metavar="SELECTOR",
        help="Reconcile only namespaces whose labels match this label selector (e.g. clawplane.dev/shard=a), "
        "so several operator deployments split the cluster; each needs its own --leader-election-id.",
    )
    run.add_argument(
        "--state-dir", type=Path, default=Path(os.environ.get("CLAWPLANE_STATE_DIR", "/var/lib/clawplane"))
    )
    run.add_argument(
        "--bridge-image",
        default=os.environ.get("CLAWPLANE_BRIDGE_IMAGE", DEFAULT_IMAGE),
        help="Image for stdio server pods (must contain clawplane).",
    )
    run.add_argument(
        "--metrics-port", type=int, default=9090, help="Port for /metrics, /healthz, /readyz (0: off)."
    )
    run.add_argument(
        "--metrics-bind-address",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="Address of the metrics/probe listener (default: loopback; the chart gives 0.0.0.0 "
        "because the kubelet probes the pod IP).",
    )
    run.add_argument(
        "--metrics-token-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="File with the bearer token /metrics requires (re-read on change; default: one generated "
        "into STATE_DIR/metrics-token). /healthz and /readyz need none.",
    )
    run.add_argument(
        "--metrics-allowed-host",
        action="append",
        default=[],
        metavar="HOST",
        help="Host header the metrics listener accepts on a non-loopback address (repeatable; none: any).",
    )
    _dashboard_arguments(run)
    run.add_argument(
        "--health-port",
        type=int,
        default=8081,
        help="Port for kopf's liveness /healthz on loopback (0: off).",
    )
    run.add_argument("--resync-interval", type=float, default=300.0, help="Seconds between full resyncs.")
    run.add_argument("--concurrency", type=int, default=8, help="Servers applied in parallel per namespace.")
    run.add_argument("--log-format", choices=("text", "json"), default="text")
    run.add_argument(
        "--kubeconfig", default=None, help="Kubeconfig file (default: in-cluster, then $KUBECONFIG)."
    )
    run.add_argument(
        "--skills-mount-path",
        default=os.environ.get("CLAWPLANE_SKILLS_MOUNT_PATH", "/var/run/clawplane/skills"),
        help="Where gateway pods mount the published skills (ConfigMap clawplane-skills-<gateway>): "
        "prompt locations point there. The operator writes inline skills under it, so it must be writable.",
    )
    run.add_argument(
        "--bridge-ingress-from",
        default=os.environ.get("CLAWPLANE_BRIDGE_INGRESS_FROM"),
        metavar="JSON",
        help="NetworkPolicy peers that may reach server pods (default: pods labelled clawplane.dev/gateway "
        "and the operator); 'none' writes no NetworkPolicy.",
    )
    _election_arguments(run)
    _webhook_arguments(run)
    return p


def _webhook_arguments(run: argparse.ArgumentParser) -> None:
    group = run.add_argument_group("admission webhook (clawplane's diagnostics at kubectl apply time)")
    group.add_argument(
        "--webhook-port",
        type=int,
        default=0,
        metavar="PORT",
        help="Serve the validating webhook here (0: off).",
    )
    group.add_argument(
        "--webhook-bind-address",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="Address of the webhook (default: loopback; the chart gives 0.0.0.0 behind its Service).",
    )
    where = group.add_mutually_exclusive_group()
    where.add_argument(
        "--webhook-service",
        default=None,
        metavar="NAME",
        help="The Service in the operator's namespace the API server calls (in a cluster).",
    )
    where.add_argument(
        "--webhook-url",
        default=None,
        metavar="URL",
        help="The https://host:port the API server calls instead (an API server outside the cluster).",
    )
    group.add_argument("--webhook-service-port", type=int, default=443, metavar="PORT")
    group.add_argument(
        "--webhook-configuration",
        default="clawplane",
        metavar="NAME",
        help="The ValidatingWebhookConfiguration the operator keeps (one per installation).",
    )
    group.add_argument(
        "--webhook-secret",
        default="clawplane-webhook-tls",
        metavar="NAME",
        help="The Secret (operator's namespace) holding the webhook's CA and certificate, renewed when due.",
    )
    group.add_argument(
        "--webhook-failure-policy",
        choices=("Ignore", "Fail"),
        default="Ignore",
        help="What the API server does when the webhook cannot answer (default Ignore: the CRDs' own "
        "checks still apply and the operator reports Invalid objects; Fail: refuse every change meanwhile).",
    )
    group.add_argument(
        "--webhook-timeout", type=int, default=5, metavar="SECONDS", help="The API server's wait (1-30)."
    )


def _webhook(args: argparse.Namespace) -> WebhookOptions | None:
    if not args.webhook_port:
        return None
    if not args.webhook_service and not args.webhook_url:
        raise SystemExit(
            "clawplane k8s: --webhook-port needs --webhook-service (in a cluster) or --webhook-url."
        )
    if args.webhook_url and not args.webhook_url.startswith("https://"):
        raise SystemExit("clawplane k8s: --webhook-url must be https:// (webhooks are called over TLS)")
    if not 1 <= args.webhook_timeout <= 30:
        raise SystemExit("clawplane k8s: --webhook-timeout must be between 1 and 30 seconds")
    return WebhookOptions(
        port=args.webhook_port,
        bind=args.webhook_bind_address,
        target=Target(url=args.webhook_url, service=args.webhook_service, port=args.webhook_service_port),
        configuration=args.webhook_configuration,
        secret=args.webhook_secret,
        failure_policy=args.webhook_failure_policy,
        timeout_seconds=args.webhook_timeout,
    )


def _dashboard_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--ui-port",
        type=int,
        default=0,
        metavar="PORT",
        help="Serve the dashboard (/ui) of one namespace on this port (0: off, the default).",
    )
    run.add_argument(
        "--ui-namespace",
        default=None,
        metavar="NAMESPACE",
        help="The namespace the dashboard shows (default: the first -n, else the kubeconfig's).",
    )
    run.add_argument(
        "--ui-bind-address",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="Address of the dashboard (default: loopback; reach it with kubectl port-forward).",
    )
    run.add_argument(
        "--ui-token-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="File with the token that logs in to look and answer approvals (re-read on change; "
        "default: one generated into STATE_DIR/ui-token).",
    )
    run.add_argument(
        "--ui-reader-token-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="File with a token that logs in to look only.",
    )
    run.add_argument(
        "--ui-allowed-host",
        action="append",
        default=[],
        metavar="HOST",
        help="Host header the dashboard accepts on a non-loopback address (repeatable; none: any).",
    )


def _election_arguments(run: argparse.ArgumentParser) -> None:
    group = run.add_argument_group("leader election (several replicas: only the Lease holder reconciles)")
    group.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Hold a coordination.k8s.io/v1 Lease before reconciling (default: on). "
        "--no-leader-elect is safe only when exactly one operator runs.",
    )
    group.add_argument(
        "--leader-election-id", default=DEFAULT_LEASE_NAME, help="Name of the Lease (default: %(default)s)."
    )
    group.add_argument(
        "--leader-election-namespace",
        default=os.environ.get("POD_NAMESPACE") or "",
        help="Namespace of the Lease (default: $POD_NAMESPACE, else the kubeconfig's namespace).",
    )
    group.add_argument(
        "--leader-elect-lease-duration",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="How long standbys wait after the last renewal they saw before taking over (whole seconds).",
    )
    group.add_argument(
        "--leader-elect-renew-deadline",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="How long the leader keeps trying to renew before it stops reconciling.",
    )
    group.add_argument(
        "--leader-elect-retry-period",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="Interval of renewals and of a standby's attempts.",
    )


def _election(args: argparse.Namespace) -> ElectionSettings | None:
    if not args.leader_elect:
        return None
    try:
        return ElectionSettings(
            namespace=args.leader_election_namespace,
            identity=f"{socket.gethostname()}_{uuid.uuid4().hex[:12]}",
            name=args.leader_election_id,
            lease_duration=args.leader_elect_lease_duration,
            renew_deadline=args.leader_elect_renew_deadline,
            retry_period=args.leader_elect_retry_period,
        )
    except ElectionError as exc:
        raise SystemExit(f"clawplane k8s: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the operator until it is stopped."""
    args = parser().parse_args(argv)
    if args.namespace_selector is not None and args.namespace:
        raise SystemExit("clawplane k8s: --namespace-selector chooses among all namespaces; drop -n")
    if args.namespace_selector is not None and not args.namespace_selector.strip():
        raise SystemExit("clawplane k8s: --namespace-selector is empty; give a selector such as shard=a")
    # Imported here: kopf and the engine are heavy, and `--help` should stay instant.
    from clawplane.k8s.runner import RunOptions, UiOptions, run_operator

    options = RunOptions(
        bridge_ingress_from=tuple(_ingress(args.bridge_ingress_from)),
        skills_mount_path=args.skills_mount_path,
        namespaces=tuple(args.namespace),
        namespace_selector=args.namespace_selector,
        state_dir=args.state_dir,
        bridge_image=args.bridge_image,
        metrics_port=args.metrics_port,
        metrics_bind=args.metrics_bind_address,
        metrics_token_file=args.metrics_token_file,
        metrics_allowed_hosts=frozenset(args.metrics_allowed_host),
        ui=UiOptions(
            port=args.ui_port,
            namespace=args.ui_namespace,
            bind=args.ui_bind_address,
            token_file=args.ui_token_file,
            reader_token_file=args.ui_reader_token_file,
            allowed_hosts=frozenset(args.ui_allowed_host),
        ),
        health_port=args.health_port,
        resync_interval=args.resync_interval,
        concurrency=args.concurrency,
        log_format=args.log_format,
        kubeconfig=args.kubeconfig,
        election=_election(args),
        webhook=_webhook(args),
    )
    return run_operator(options)


if __name__ == "__main__":
    sys.exit(main())
