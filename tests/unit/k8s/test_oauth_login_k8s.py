"""Cluster OAuth logins without a cluster: the command's refusals, the Secret's name, settled phases.

The Secret itself, the write-back and the whole login are tested on the real API server
(``tests/compat/kubernetes/test_oauth_secrets_real.py``, ``tests/browser/test_k8s_oauth_login_browser.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.integration.test_cli import cli

from clawplane.k8s.adapter.reconciler import _unsettled
from clawplane.k8s.objects.oauthsecrets import oauth_secret_name, oauth_servers
from clawplane.state.records import ObservedState, ResourceRecord


@pytest.mark.parametrize("command", ["login", "logout"])
def test_a_missing_kubeconfig_is_a_clear_error(command: str, tmp_path: Path) -> None:
    """The cause and the fix, exit 1, no traceback."""
    missing = tmp_path / "nope.kubeconfig"
    proc = cli(command, "--kubernetes", "demo", "notes", "--kubeconfig", str(missing))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"error: no kubeconfig at {missing}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_secret_is_named_for_its_server() -> None:
    """A DNS label per server name; only ``auth: oauth`` McpServers have one."""
    assert oauth_secret_name("notes") == "clawplane-oauth-notes"
    assert oauth_secret_name("Notes_2").startswith("clawplane-oauth-notes-2-")
    live = [
        {"kind": "McpServer", "metadata": {"name": "a"}, "spec": {"auth": "oauth", "url": "https://a/mcp"}},
        {"kind": "McpServer", "metadata": {"name": "b"}, "spec": {"url": "https://b/mcp"}},
        {"kind": "Agent", "metadata": {"name": "c"}, "spec": {"auth": "oauth"}},
    ]
    assert oauth_servers(live) == ["a"]


def _observed(phase: str) -> tuple[list[dict[str, Any]], ObservedState]:
    record = ResourceRecord("McpServer/notes", "McpServer", "notes", "h", 1, 1, {}, phase)
    return [{"kind": "McpServer", "metadata": {"name": "notes"}}], ObservedState(
        resources={record.key: record}
    )


@pytest.mark.parametrize(("phase", "unsettled"), [
    ("LoginRequired", False), ("ToolsUnknown", False), ("Ready", False), ("Failed", True), ("Starting", True),
])  # fmt: skip
def test_waiting_on_a_login_settles_the_namespace(phase: str, unsettled: bool) -> None:
    """A server waiting on a person is no reason to look again: the login Secret's event wakes the namespace."""
    assert _unsettled(*_observed(phase)) is unsettled
