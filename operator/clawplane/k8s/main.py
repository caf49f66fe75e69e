"""``clawplane k8s run``: the Kubernetes operator's command line (argparse: the CLI layer is separate)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from clawplane import __version__

DEFAULT_IMAGE = f"ghcr.io/clawplane/clawplane:{__version__}"


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
        "--health-port", type=int, default=8081, help="Port for kopf's liveness /healthz (0: off)."
    )
    run.add_argument("--resync-interval", type=float, default=300.0, help="Seconds between full resyncs.")
    run.add_argument("--concurrency", type=int, default=8, help="Servers applied in parallel per namespace.")
    run.add_argument("--log-format", choices=("text", "json"), default="text")
    run.add_argument(
        "--kubeconfig", default=None, help="Kubeconfig file (default: in-cluster, then $KUBECONFIG)."
    )
    return p


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the operator until it is stopped."""
    args = parser().parse_args(argv)
    # Imported here: kopf and the engine are heavy, and `--help` should stay instant.
    from clawplane.k8s.runner import RunOptions, run_operator

    options = RunOptions(
        namespaces=tuple(args.namespace),
        state_dir=args.state_dir,
        bridge_image=args.bridge_image,
        metrics_port=args.metrics_port,
        health_port=args.health_port,
        resync_interval=args.resync_interval,
        concurrency=args.concurrency,
        log_format=args.log_format,
        kubeconfig=args.kubeconfig,
    )
    return run_operator(options)


if __name__ == "__main__":
    sys.exit(main())
