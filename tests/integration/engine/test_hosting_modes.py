"""Consumer-hosted stdio servers are probed and rendered with their command; nothing keeps running."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.integration.engine.conftest import ROOT, Cli, processes_under

SERVER = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: local-notes
spec:
  command: {python}
  args: [notes_server.py]
  cwd: .
  hosting: consumer
---
apiVersion: clawplane.dev/v1alpha1
kind: Agent
metadata:
  name: main
"""


def test_consumer_server_is_probed_rendered_and_not_left_running(tmp_path: Path) -> None:
    folder = tmp_path / "consumer"
    folder.mkdir()
    shutil.copy(ROOT / "examples" / "quickstart" / "servers" / "notes_server.py", folder / "notes_server.py")
    (folder / "resources.yaml").write_text(SERVER.format(python=sys.executable))
    cli = Cli(folder)
    try:
        applied = cli("apply", str(folder), "--yes")
        assert applied.returncode == 0, applied.stdout
        status = cli.json("status", str(folder), "--json")
        server = next(r for r in status["resources"] if r["key"] == "McpServer/local-notes")
        assert server["phase"] == "Ready" and server["toolCount"] == 5 and server["runtime"] == "probed"
        assert server["pid"] is None
        rendered = json.loads((folder / ".clawplane" / "out" / "openclaw.json").read_text())
        entry = rendered["mcp"]["servers"]["local-notes"]
        assert entry["command"] == sys.executable and entry["args"] == ["notes_server.py"]
        assert entry["cwd"] == str(folder)
        assert [p for p in processes_under(folder) if "notes_server" in " ".join(p.info["cmdline"] or [])] == []
        tools = json.loads((folder / ".clawplane" / "out" / "agents" / "main" / "tools.json").read_text())
        assert "local-notes__greet" in [t["name"] for t in tools]
        assert cli("plan", str(folder), "--detailed-exitcode").returncode == 0
    finally:
        cli("down", str(folder))
