"""What a rendered config cannot express is said in plan, apply, status and doctor, never swallowed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.integration.engine.conftest import Cli

SERVER = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata: {name: consumer-run}
spec:
  command: %s
  args: [-c, "pass"]
  hosting: consumer
  env:
    API_KEY: {valueFrom: {file: key.txt}}
"""
EXPECTED = "secret reference left out: OpenClaw has no file reference for this field"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "server.yaml").write_text(SERVER % sys.executable)
    (folder / "key.txt").write_text("file-secret-canary\n")
    return folder


def test_an_unrenderable_secret_is_reported_everywhere(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    cli = Cli(folder)
    try:
        plan = cli("plan", str(folder))
        assert plan.returncode == 0, plan.stdout + plan.stderr
        assert "Rendering problems (the configs leave these out):" in plan.stdout
        assert "McpServer/consumer-run: error[render.secret-unrenderable]" in plan.stdout
        assert EXPECTED in plan.stdout
        as_json = json.loads(cli("plan", str(folder), "--format", "json").stdout)
        assert [p["code"] for p in as_json["render_problems"]] == ["render.secret-unrenderable"]

        applied = cli("apply", str(folder), "--yes")
        assert EXPECTED in applied.stdout, applied.stdout

        status = cli("status", str(folder))
        assert "the rendered configs leave out:" in status.stdout and EXPECTED in status.stdout
        doc = cli.json("status", str(folder), "--json")
        assert [p["path"] for p in doc["renderProblems"]] == ["spec.env.API_KEY"]

        doctor = cli("doctor", str(folder))
        assert doctor.returncode == 1 and EXPECTED in doctor.stdout
        for text in (plan.stdout, applied.stdout, status.stdout, doctor.stdout):
            assert "file-secret-canary" not in text
    finally:
        cli("down", str(folder))
