"""What ``clawplane login`` and ``logout`` share: the folder's ``auth: oauth`` server, resolved."""

from __future__ import annotations

from pathlib import Path

from clawplane.cli.common import fail, report_invalid
from clawplane.models import McpServer
from clawplane.reconcile.engine import Engine, InvalidFolderError
from clawplane.runtimes import Launch, StartError, prepare_launch
from clawplane.workspace import Workspace

__all__ = ["oauth_launch"]


def oauth_launch(ws: Workspace, server: str) -> Launch:
    """The resolved launch of ``server`` in the folder; exits with a clear message unless it uses OAuth."""
    try:
        desired, _ = Engine(ws).load()
    except InvalidFolderError as exc:
        report_invalid(exc)
        raise AssertionError("unreachable") from None
    found = desired.resources.get(f"McpServer/{server}")
    if found is None or not isinstance(found.resource, McpServer):
        names = sorted(d.name for d in desired.resources.values() if isinstance(d.resource, McpServer))
        fail(f'no McpServer "{server}" in {ws.folder}' + (f" (servers: {', '.join(names)})" if names else ""))
        raise AssertionError("unreachable")
    spec = found.resource.spec
    if spec.auth != "oauth" or not spec.url:
        fail(f'McpServer "{server}" is not a remote server with `auth: oauth`: there is nothing to log in to')
    try:
        return prepare_launch(server, spec, base_dir=Path(found.base_dir), resolved=found.secrets)
    except StartError as exc:
        fail(str(exc))
        raise AssertionError("unreachable") from None
