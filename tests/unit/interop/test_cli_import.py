"""`clawplane import` as a user runs it: files written, report printed, exit 0/1/2."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "openclaw-configs"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", "import", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1", "HOME": str(cwd / "home"), "OPENCLAW_BUNDLED_SKILLS_DIR": str(cwd / "b")},
        cwd=cwd,
    )
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc


def test_complete_import_exits_0(tmp_path: Path) -> None:
    proc = _cli(str(FIXTURES / "team-fleet.json5"), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["agents.yaml", "channels.yaml", "gateway.yaml", "mcp-servers.yaml"]
    assert stat.S_IMODE((tmp_path / "out" / "gateway.yaml").stat().st_mode) == 0o600
    assert "imported 8 resources" in proc.stdout and "0 not imported" in proc.stdout


def test_partial_import_writes_what_it_can_reports_each_loss_with_its_line_and_exits_0(tmp_path: Path) -> None:
    source = FIXTURES / "unmappable.json5"
    proc = _cli(str(source), "-o", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert f"{source}:11:7: warning[import.unmapped]" in proc.stdout
    assert "(at mcp.servers.broken)" in proc.stdout
    assert (tmp_path / "mcp-servers.yaml").is_file()
    assert "not imported, " in proc.stdout.splitlines()[-1]
    assert "warning[import.plugin-skills]" in proc.stdout  # plugins are on: their skills are named as missing


def test_nothing_importable_exits_1(tmp_path: Path) -> None:
    source = tmp_path / "openclaw.json"
    source.write_text('{"mcp": {"servers": {"x": "not an object"}}, "agents": {"entries": {}}}')
    proc = _cli(str(source), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert "imported 1 resource" in proc.stdout or "imported 0 resources" in proc.stdout


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert _cli(str(tmp_path / "missing.json"), cwd=tmp_path).returncode == 2
    (tmp_path / "bad.json").write_text("{not json")
    assert _cli(str(tmp_path / "bad.json"), cwd=tmp_path).returncode == 2
    source = FIXTURES / "legacy-mcp.json5"
    assert _cli(str(source), cwd=tmp_path).returncode == 0
    again = _cli(str(source), cwd=tmp_path)
    assert again.returncode == 2 and "--force" in again.stderr
    assert _cli(str(source), "--force", "--quiet", cwd=tmp_path).returncode == 0
