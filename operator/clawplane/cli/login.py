"""``clawplane login FOLDER SERVER``: log an ``auth: oauth`` remote server in, through a browser.

Runs the OAuth 2.1 authorization-code flow with PKCE and a loopback redirect: prints the
authorization URL, opens it in a browser when one is found (``--no-browser`` only prints),
waits for the redirect on 127.0.0.1 (``--timeout``), lists the server's tools with the new
token and stores the tokens encrypted in the folder's state database. The supervisor then
uses (and refreshes) them; `clawplane apply` discovers the tools. Tokens are never printed.
"""

from __future__ import annotations

import time
import webbrowser
from typing import Annotated

import anyio
import typer

from clawplane.cli.common import OutDirOpt, StateDirOpt, fail, workspace
from clawplane.cli.console import err, out
from clawplane.cli.kubelogin import (
    FolderOrNamespaceArg,
    KubeconfigOpt,
    KubernetesOpt,
    no_kubeconfig,
    run_kubernetes,
)
from clawplane.cli.oauthserver import oauth_launch
from clawplane.runtimes import StartError
from clawplane.runtimes.oauth import NotLoopbackError
from clawplane.runtimes.oauth import login as run_login
from clawplane.state import StateError

__all__ = ["login"]

CONNECT_SECONDS = 30.0
"""Bound of each request of the flow (discovery, registration, token) besides the wait for the person."""


def login(
    folder: FolderOrNamespaceArg,
    server: Annotated[str, typer.Argument(help="The McpServer to log in to (it has `auth: oauth`).")],
    timeout: Annotated[
        float, typer.Option("--timeout", min=1, help="Seconds to wait for the browser to come back.")
    ] = 300.0,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Only print the URL to open.")] = False,
    state_dir: StateDirOpt = None,
    out_dir: OutDirOpt = None,
    kubernetes: KubernetesOpt = False,
    kubeconfig: KubeconfigOpt = None,
) -> None:
    """Log a remote MCP server in with OAuth (browser, loopback redirect); store the tokens encrypted.

    In a cluster: `clawplane login --kubernetes NAMESPACE SERVER` (the tokens go to a Secret).
    """
    if kubernetes:
        run_kubernetes("login", folder, server, kubeconfig, timeout=timeout, no_browser=no_browser)
    no_kubeconfig(kubeconfig)
    ws = workspace(folder, state_dir, out_dir)
    launch = oauth_launch(ws, server)

    def announce(url: str) -> None:
        out.print(f"Open this URL to log in to {server}:\n  {url}", markup=False, soft_wrap=True)
        if not no_browser:
            try:
                opened = webbrowser.get().open(url)
            except webbrowser.Error:
                opened = False
            if opened:
                out.print("(opened in your browser)", markup=False)
        out.print(f"waiting up to {timeout:g}s for the browser to come back…", markup=False)

    try:
        result = anyio.run(
            lambda: run_login(
                server, launch, ws.state_dir, announce=announce, timeout=timeout,
                connect_timeout=CONNECT_SECONDS,
            )
        )  # fmt: skip
    except TimeoutError:
        fail(f"no answer from the browser within {timeout:g}s; run the command again (or raise --timeout)")
        return
    except NotLoopbackError as exc:
        fail(str(exc))
        return
    except (StartError, StateError, OSError) as exc:
        fail(f"login to {server} failed: {launch.redact(str(exc))}")
        return
    if not result.asked:
        err.print(f"{server} answered without asking for a login; nothing stored", markup=False)
    expiry = ""
    if result.expires_at is not None:
        left = max(0, int(result.expires_at - time.time()))
        expiry = f"; the access token expires in {left}s and is refreshed before that"
    out.print(f"logged in to {server}: {len(result.tools)} tools{expiry}", markup=False)
    out.print(f"run `clawplane apply {folder}` to discover them", markup=False)
