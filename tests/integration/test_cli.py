"""The CLI as a user runs it: exit codes, formats, colour rules, no tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"
INVALID = ROOT / "examples" / "invalid"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "NO_COLOR": "", **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "clawplane", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=full_env,
        cwd=ROOT,
    )
    assert "Traceback" not in proc.stderr + proc.stdout
    return proc


def test_version() -> None:
    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("clawplane ")
    # Which OpenClaw the checks and the rendered openclaw.json are for.
    assert "(OpenClaw 2026.9.6 eb377ac)" in proc.stdout


@pytest.mark.parametrize("command", [[], ["validate"], ["schema"], ["get"]])
def test_every_command_has_help(command: list[str]) -> None:
    proc = cli(*command, "--help")
    assert proc.returncode == 0 and "Usage" in proc.stdout


def test_validate_quickstart_exits_0() -> None:
    proc = cli("validate", str(QUICKSTART))
    assert proc.returncode == 0, proc.stdout
    assert "valid: 8 resources in 6 files: 0 errors, 0 warnings" in proc.stdout


def test_validate_invalid_exits_1_and_every_line_has_a_position() -> None:
    proc = cli("validate", str(INVALID))
    assert proc.returncode == 1
    lines = [ln for ln in proc.stdout.splitlines() if "error[" in ln or "warning[" in ln]
    assert len(lines) >= 15
    for line in lines:
        file_part, line_no, col = line.split(":")[:3]
        assert file_part.endswith(".yaml") and int(line_no) >= 1 and int(col) >= 1, line


def test_validate_json_format() -> None:
    proc = cli("validate", str(INVALID), "--format", "json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["valid"] is False and doc["errors"] >= 10
    assert all(d["file"] and d["line"] and d["column"] and d["code"] for d in doc["diagnostics"])


def test_validate_github_format_prints_annotations() -> None:
    proc = cli("validate", str(INVALID), "--format", "github")
    assert proc.returncode == 1
    assert all(ln.startswith(("::error ", "::warning ")) for ln in proc.stdout.splitlines())


def test_strict_makes_warnings_fail(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: s\nspec:\n  type: sse\n  url: http://h/x\n"
    )
    assert cli("validate", str(tmp_path)).returncode == 0
    assert cli("validate", "--strict", str(tmp_path)).returncode == 1


def test_quiet_prints_only_what_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(  # a legacy `type:` is a warning
        "apiVersion: clawplane.dev/v1alpha1\nkind: McpServer\nmetadata:\n  name: s\nspec:\n  type: sse\n  url: http://h/x\n"
    )
    loud = cli("validate", str(tmp_path))
    assert "warning[" in loud.stdout and "valid: " in loud.stdout
    quiet = cli("validate", "--quiet", str(tmp_path))
    assert (quiet.returncode, quiet.stdout) == (0, "")
    strict = cli("validate", "--quiet", "--strict", str(tmp_path))
    assert strict.returncode == 1
    assert strict.stdout == loud.stdout[: loud.stdout.index("valid: ")]
    errors = cli("validate", "-q", str(INVALID))
    printed = [ln for ln in errors.stdout.splitlines() if not ln.startswith("  hint:")]
    assert errors.returncode == 1 and printed and all("error[" in ln for ln in printed)
    assert "invalid: " not in errors.stdout


def test_usage_errors_exit_2() -> None:
    assert cli("validate").returncode == 2
    assert cli("validate", "--format", "xml", str(QUICKSTART)).returncode == 2
    assert cli("no-such-command").returncode == 2


def test_missing_path_is_a_diagnostic_not_a_crash() -> None:
    proc = cli("validate", "does/not/exist")
    assert proc.returncode == 1 and "no such file or directory" in proc.stdout


def test_no_color_and_non_tty_output_is_plain() -> None:
    proc = cli("validate", str(INVALID), env={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    assert "\x1b[" not in proc.stdout


def test_tty_output_is_coloured_unless_no_color() -> None:
    coloured = cli("validate", str(INVALID), env={"FORCE_COLOR": "1", "TTY_COMPATIBLE": "1"})
    assert "\x1b[" in coloured.stdout


def test_schema_check_passes_on_the_committed_files() -> None:
    proc = cli("schema", "--check")
    assert proc.returncode == 0, proc.stderr


def test_get_lists_resources_without_secrets() -> None:
    proc = cli("get", str(QUICKSTART), "--json")
    rows = json.loads(proc.stdout)
    assert {(r["kind"], r["name"]) for r in rows} >= {("McpServer", "notes"), ("Agent", "coder")}
    proc = cli("get", str(INVALID / "names.yaml"))
    assert proc.returncode == 1


def test_a_yaml_file_that_is_not_a_resource_is_a_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("a: 1\n")
    proc = cli("validate", str(tmp_path / "x.yaml"))
    assert proc.returncode == 1 and "missing apiVersion" in proc.stdout
