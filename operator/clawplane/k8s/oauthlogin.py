"""``clawplane login --kubernetes NAMESPACE SERVER`` and ``clawplane logout --kubernetes NAMESPACE SERVER``.

The commands are the CLI's (``cli/login.py``, ``cli/logout.py``); this module does their work.

Login reads the McpServer from the cluster (with the user's kubeconfig), runs the same
loopback authorization-code flow as ``clawplane login FOLDER SERVER`` on this machine, and
writes the tokens into the server's login Secret (``k8s.oauthsecrets``), owned by the McpServer;
the operator then discovers the server's tools with it and keeps it refreshed. Logout revokes
the tokens where the authorization server can and deletes the Secret. Tokens are never printed.
"""

from __future__ import annotations

import sys
import time
import webbrowser
from dataclasses import dataclass
from pathlib import Path

import anyio
from pydantic import ValidationError

from clawplane.k8s.api.kubeapi import ApiError, Kind, KubeApi
from clawplane.k8s.api.kubeconfig import KubeConfigError, load_connection
from clawplane.k8s.objects.children import GROUP, Owner
from clawplane.k8s.objects.oauthsecrets import SecretRows, with_header_secrets, with_oauth_secrets
from clawplane.k8s.objects.secretrefs import SecretReader
from clawplane.models import McpServerSpec
from clawplane.runtimes import Launch, StartError, prepare_launch
from clawplane.runtimes.oauth import CredentialStorage, NotLoopbackError, revoke
from clawplane.runtimes.oauth import login as run_login

__all__ = ["KubeLogin", "kube_login", "kube_logout"]

MCPSERVERS = Kind(GROUP, "v1alpha1", "mcpservers", "McpServer")
CONNECT_SECONDS = 30.0


class LoginFailed(Exception):
    """A user-caused failure: the message says the cause and the fix."""


@dataclass(frozen=True)
class KubeLogin:
    """What ``clawplane login|logout --kubernetes`` was asked."""

    namespace: str
    server: str
    kubeconfig: str | None = None
    timeout: float = 300.0
    no_browser: bool = False


async def _server(api: KubeApi, namespace: str, name: str) -> tuple[Launch, Owner]:
    cr = await api.get(MCPSERVERS, namespace, name)
    if cr is None:
        raise LoginFailed(
            f'no McpServer "{name}" in namespace "{namespace}"; '
            f"check the names (kubectl get mcpservers -n {namespace})"
        )
    try:
        spec = McpServerSpec.model_validate(cr.get("spec") or {})
    except ValidationError as exc:
        raise LoginFailed(f'McpServer "{name}" is not valid: {exc.errors()[0]["msg"]}') from None
    if spec.auth != "oauth" or not spec.url:
        raise LoginFailed(
            f'McpServer "{name}" is not a remote server with `auth: oauth`: there is nothing to log in to'
        )
    try:
        reader = SecretReader(api, namespace)
        resolved = await with_oauth_secrets(reader, await with_header_secrets(reader, spec))
        launch = prepare_launch(name, resolved, base_dir=Path.cwd())
    except (LookupError, StartError) as exc:
        raise LoginFailed(str(exc)) from None
    return launch, Owner("McpServer", name, cr["metadata"]["uid"])


async def _login(args: KubeLogin) -> None:
    api = KubeApi(load_connection(args.kubeconfig))
    try:
        launch, owner = await _server(api, args.namespace, args.server)
        rows = SecretRows(api, args.namespace, args.server)
        await rows.load()

        def announce(url: str) -> None:
            print(f"Open this URL to log in to {args.server}:\n  {url}", flush=True)
            if not args.no_browser:
                try:
                    if webbrowser.get().open(url):
                        print("(opened in your browser)", flush=True)
                except webbrowser.Error:
                    pass
            print(f"waiting up to {args.timeout:g}s for the browser to come back…", flush=True)

        try:
            result = await run_login(
                args.server, launch, None, announce=announce, timeout=args.timeout,
                connect_timeout=CONNECT_SECONDS, rows=rows,
            )  # fmt: skip
        except StartError as exc:
            raise LoginFailed(f"login to {args.server} failed: {launch.redact(str(exc))}") from None
        if not result.asked:
            print(f"{args.server} answered without asking for a login; nothing stored", file=sys.stderr)
            return
        await rows.flush(owner=owner)
        expiry = ""
        if result.expires_at is not None:
            expiry = f"; the access token expires in {max(0, int(result.expires_at - time.time()))}s"
        print(f"logged in to {args.server}: {len(result.tools)} tools{expiry}")
        print(
            f"stored in Secret {args.namespace}/{rows.name}; "
            "the operator discovers the tools with it and refreshes it"
        )
    finally:
        await api.aclose()


async def _logout(args: KubeLogin) -> None:
    api = KubeApi(load_connection(args.kubeconfig))
    try:
        rows = SecretRows(api, args.namespace, args.server)
        found = await rows.load()
        if found is None:
            print(f"no stored login for {args.server} in namespace {args.namespace}; nothing to do")
            return
        outcome = await revoke(CredentialStorage(rows, args.server, found.url), timeout=CONNECT_SECONDS)
        await rows.remove()
        print(
            f"logged out of {args.server}: tokens {outcome}; Secret {args.namespace}/{rows.name} is deleted"
        )
    finally:
        await api.aclose()


def _failure(exc: Exception, command: str, args: KubeLogin) -> str:
    """What went wrong, and what to do (the user's fix, never a traceback)."""
    if isinstance(exc, TimeoutError):
        return f"no answer from the browser within {args.timeout:g}s; run the command again"
    if isinstance(exc, ApiError):
        return (
            f"the API server refused: {exc} (your kubeconfig user needs to read McpServers "
            f"and write Secrets in namespace {args.namespace})"
        )
    if isinstance(exc, OSError):
        return f"{command} failed: {exc}"
    return str(exc)


def kube_login(args: KubeLogin) -> int:
    """Log the McpServer in and store its tokens in its login Secret; the exit code."""
    return _run("login", args)


def kube_logout(args: KubeLogin) -> int:
    """Revoke the McpServer's tokens and delete its login Secret; the exit code."""
    return _run("logout", args)


def _run(command: str, args: KubeLogin) -> int:
    try:
        anyio.run(_login if command == "login" else _logout, args)
    except (LoginFailed, KubeConfigError, NotLoopbackError, TimeoutError, ApiError, OSError) as exc:
        print(f"error: {_failure(exc, command, args)}", file=sys.stderr)
        return 1
    return 0
