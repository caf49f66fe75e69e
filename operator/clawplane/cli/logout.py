"""``clawplane logout FOLDER SERVER``: revoke and forget a remote server's stored OAuth login.

Revokes the refresh and access tokens at the authorization server's revocation endpoint
(RFC 7009) when it has one, deletes the stored credential either way, and says which
happened. The server need not be declared any more: the stored credential names its URL.
"""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from clawplane.cli.common import OutDirOpt, StateDirOpt, fail, workspace
from clawplane.cli.console import out
from clawplane.cli.kubelogin import (
    FolderOrNamespaceArg,
    KubeconfigOpt,
    KubernetesOpt,
    no_kubeconfig,
    run_kubernetes,
)
from clawplane.runtimes.oauth import logout as run_logout
from clawplane.state import StateError

__all__ = ["logout"]


def logout(
    folder: FolderOrNamespaceArg,
    server: Annotated[str, typer.Argument(help="The McpServer whose login to forget.")],
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
    kubernetes: KubernetesOpt = False,
    kubeconfig: KubeconfigOpt = None,
) -> None:
    """Revoke a remote MCP server's OAuth tokens (where the server supports it) and delete them.

    In a cluster: `clawplane logout --kubernetes NAMESPACE SERVER` (deletes its login Secret).
    """
    if kubernetes:
        run_kubernetes("logout", folder, server, kubeconfig)
    no_kubeconfig(kubeconfig)
    ws = workspace(folder, state_dir, out_dir)
    try:
        result = anyio.run(lambda: run_logout(server, ws.state_dir))
    except StateError as exc:
        fail(str(exc))
        return
    if not result.had_credential:
        out.print(f"no stored login for {server}; nothing to do", markup=False)
        return
    done = f"logged out of {server}: tokens {result.revoked}; the stored credential is deleted"
    out.print(done, markup=False)
