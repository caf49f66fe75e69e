"""``auth: oauth`` remote servers nobody logged in to: waiting on the operator, never Failed.

A real protected MCP server (``tests/fixtures/servers/oauth_protected_server.py``: 401 with
``WWW-Authenticate`` and protected resource metadata) behind two McpServers of one folder:
``identity: shared`` ends ``LoginRequired`` with the ``clawplane login`` command to run;
``identity: per-requester`` ends ``ToolsUnknown`` (each sender logs in through OpenClaw). Both
leave ``apply`` successful, and nothing was registered anywhere (the authorization server the
metadata names does not even exist: an unattended client never contacts it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.oidc import Issuer, protected_server

pytestmark = [pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[3]
WAIT_S = 120.0


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clawplane", *map(str, args)],
        capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )  # fmt: skip


def test_no_login_is_login_required_or_unknown_tools_not_failed(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    # Port 9 (discard) on loopback: nothing answers there, and nothing should ever ask.
    with protected_server(Issuer("http://127.0.0.1:9"), tmp_path) as url:
        docs = []
        for name, identity in (("shared", "shared"), ("each", "per-requester")):
            docs.append(
                f"apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: {name}\n"
                f"spec:\n  url: {url}\n  transport: streamable-http\n  auth: oauth\n"
                f"  oauth:\n    identity: {identity}\n"
            )
        (folder / "servers.yaml").write_text("---\n".join(docs), encoding="utf-8")
        try:
            applied = _cli("apply", folder, "--yes")
            assert applied.returncode == 0, applied.stdout + applied.stderr
            status = _cli("status", folder, "--json")
            assert status.returncode == 0, status.stderr
        finally:
            _cli("down", folder)
    found = {r["name"]: r for r in json.loads(status.stdout)["resources"]}
    shared, each = found["shared"], found["each"]
    assert shared["phase"] == "LoginRequired"
    assert shared["observedGeneration"] == shared["generation"]  # observed: it waits on a person
    ready = {c["type"]: c for c in shared["conditions"]}["Ready"]
    assert ready["reason"] == "LoginRequired"
    assert ready["message"] == f"login required: run `clawplane login {folder} shared`"
    assert each["phase"] == "ToolsUnknown"
    assert each["observedGeneration"] == each["generation"]
    tools = {c["type"]: c for c in each["conditions"]}["ToolsDiscovered"]
    assert tools["reason"] == "ToolsUnknown" and f"clawplane login {folder} each" in tools["message"]
    assert not (tmp_path / "folder" / ".clawplane" / "oauth.key").exists()  # nothing was stored
