"""An operator serving namespace ``demo``'s dashboard against the emulator, and the objects it shows.

Shared by tests/integration/k8s (HTTP) and tests/browser (Chromium): two hosted servers running
the fixture MCP server, an Agent using every server, and a Gateway whose rules hold server
deletes. ``OBJECTS`` carry no namespace, so the same documents can be written to a folder.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from clawplane.k8s.dashboard import DashboardOptions

NS = "demo"
SERVER_PY = Path(__file__).resolve().parents[1] / "fixtures" / "servers" / "normal_server.py"
TOKEN = "ui-token-for-the-emulator-test-0123456789"
READER_TOKEN = "ui-reader-token-for-the-emulator-test-0123"
# A pass and a pod start take a few seconds here; a loaded 2-core machine gets a minute.
WAIT_S = 60.0


def server(name: str) -> dict[str, Any]:
    """A hosted stdio server running the fixture MCP server."""
    return {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "McpServer",
        "metadata": {"name": name},
        "spec": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER_PY)]},
    }


OBJECTS = [
    server("notes"),
    server("other"),
    {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "Agent",
        "metadata": {"name": "bot"},
        "spec": {"description": "helps"},  # every enabled server: deleting one leaves it valid
    },
    {
        "apiVersion": "clawplane.dev/v1alpha1",
        "kind": "Gateway",
        "metadata": {"name": "default"},
        "spec": {"approvals": {"rules": [{"name": "server-deletes", "kinds": ["McpServer"], "actions": ["delete"]}]}},
    },
]


def in_namespace(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` in namespace ``demo``."""
    return {**obj, "metadata": {**obj["metadata"], "namespace": NS}}


def dashboard_options(namespace: str, tmp_path: Path) -> tuple[DashboardOptions, list[str]]:
    """Dashboard options for ``namespace`` (tokens ``TOKEN``, ``READER_TOKEN``) and where its URL lands."""
    tokens = tmp_path / "tokens"
    tokens.mkdir(mode=0o700)
    (tokens / "ui").write_text(TOKEN + "\n")
    (tokens / "reader").write_text(READER_TOKEN + "\n")
    urls: list[str] = []
    return DashboardOptions(namespace, tokens / "ui", tokens / "reader", port=0, on_listening=urls.append), urls
