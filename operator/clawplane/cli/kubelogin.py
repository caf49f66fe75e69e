"""What ``clawplane login`` and ``logout`` share for ``--kubernetes`` (an McpServer of a cluster).

With ``--kubernetes`` the first argument is the McpServer's namespace instead of a folder, and
the work is the operator's (``k8s.oauthlogin``), imported only then.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from clawplane.cli.common import fail
from clawplane.cli.console import EXIT_USAGE

__all__ = ["FolderOrNamespaceArg", "KubeconfigOpt", "KubernetesOpt", "no_kubeconfig", "run_kubernetes"]


def _folder_unless_kubernetes(ctx: typer.Context, value: Path) -> Path:
    # --kubernetes is eager, so it is known here wherever it stands on the command line; the
    # messages are those of typer's own check of a folder argument (``exists=True``).
    if ctx.params.get("kubernetes"):
        return value
    if not value.exists():
        raise typer.BadParameter(f"dir {str(value)!r} does not exist.")
    if not value.is_dir():
        raise typer.BadParameter(f"dir {str(value)!r} is a file.")
    return value


FolderOrNamespaceArg = Annotated[
    Path,
    typer.Argument(
        help="The resource folder (with --kubernetes: the McpServer's namespace).",
        callback=_folder_unless_kubernetes,
    ),
]
KubernetesOpt = Annotated[
    bool,
    typer.Option(
        "--kubernetes",
        is_eager=True,
        help="The McpServer of a cluster: FOLDER is its namespace, the tokens live in its login Secret.",
    ),
]
KubeconfigOpt = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig", help="With --kubernetes: kubeconfig file (default: $KUBECONFIG, ~/.kube/config)."
    ),
]


def run_kubernetes(command: str, namespace: Path, server: str, kubeconfig: str | None, **more: Any) -> None:
    """Run ``command`` (login or logout) for the cluster's McpServer and exit with its code."""
    from clawplane.k8s.oauthlogin import KubeLogin, kube_login, kube_logout

    args = KubeLogin(str(namespace), server, kubeconfig, **more)
    raise typer.Exit(kube_login(args) if command == "login" else kube_logout(args))


def no_kubeconfig(kubeconfig: str | None) -> None:
    """Refuse ``--kubeconfig`` without ``--kubernetes`` (a folder's login uses no cluster)."""
    if kubeconfig is not None:
        fail(
            "--kubeconfig goes with --kubernetes NAMESPACE SERVER (a folder's login uses no cluster)",
            EXIT_USAGE,
        )
