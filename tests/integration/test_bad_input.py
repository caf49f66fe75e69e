"""Every bad input through the real CLI: clean exit codes, parseable JSON, no tracebacks, no hangs.

Runs ``python -m clawplane validate FILE --format json`` as a subprocess for each case of
the corpus in tests/fixtures/bad-input/ (committed files plus the big, binary and hostile
ones that tests/fixtures/bad-input/generated.py writes at test time). The exact codes and
positions are checked in process by tests/unit/loading/test_loading_bad_input.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "bad-input"
HANG_GUARD_S = 30
CODE_RE = re.compile(r"^[a-z]+(\.[a-z][a-z0-9-]*)+$")
# Diagnostics about a whole file, which have no line or column.
POSITIONLESS = frozenset({"input.empty-file", "input.too-large", "input.not-found", "input.unreadable"})


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bad_input_generated_cli", CORPUS / "generated.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generated = _load_generator()
COMMITTED = sorted(p.name for p in CORPUS.glob("*.yaml"))
CASES = sorted([*COMMITTED, *generated.GENERATED])


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made: dict[str, Path] = generated.write_generated(tmp_path_factory.mktemp("bad-input-cli"))
    return {**{name: CORPUS / name for name in COMMITTED}, **made}


def clawplane(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("CLAWPLANE_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "clawplane", *args],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        cwd=ROOT,
        env=env,
        check=False,
    )


def assert_clean_stderr(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "internal error" not in proc.stderr, proc.stderr[-3000:]


def assert_well_formed(diag: dict[str, Any], file: str) -> None:
    assert diag["severity"] in ("error", "warning", "info")
    assert isinstance(diag["code"], str) and CODE_RE.match(diag["code"]), diag
    assert isinstance(diag["message"], str) and diag["message"].strip(), diag
    assert diag["file"] == file, diag
    if diag["code"] in POSITIONLESS:
        assert diag["line"] is None and diag["column"] is None, diag
    else:
        assert isinstance(diag["line"], int) and diag["line"] >= 1, diag
        assert isinstance(diag["column"], int) and diag["column"] >= 1, diag


def test_corpus_has_every_kind_of_case() -> None:
    assert len(CASES) == len(set(CASES)) >= 35
    assert generated.VALID.issubset(CASES)


@pytest.mark.parametrize("name", CASES)
def test_cli_reports_bad_input_cleanly(name: str, paths: dict[str, Path]) -> None:
    path = str(paths[name])
    proc = clawplane("validate", path, "--format", "json")
    assert_clean_stderr(proc)
    valid = name in generated.VALID
    assert proc.returncode == (0 if valid else 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["valid"] is valid
    assert report["files"] == 1
    assert report["errors"] == sum(d["severity"] == "error" for d in report["diagnostics"])
    if valid:
        assert report["diagnostics"] == [] and report["resources"] == 1
    else:
        assert report["errors"] >= 1
    for diag in report["diagnostics"]:
        assert_well_formed(diag, path)


@pytest.mark.parametrize("output", ["text", "github"])
def test_whole_corpus_in_one_run(output: str, paths: dict[str, Path]) -> None:
    folders = sorted({str(p.parent) for p in paths.values()})
    proc = clawplane("validate", *folders, "--format", output)
    assert_clean_stderr(proc)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    invalid = {name for name in CASES if name not in generated.VALID}
    if output == "github":
        assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines), lines[:5]
        named = {Path(m.group(1)).name for line in lines if (m := re.search(r"file=([^,:]+)", line))}
    else:
        assert lines[-1].startswith("invalid: ") and f"in {len(CASES)} files" in lines[-1]
        named = {Path(line.split(":", 1)[0]).name for line in lines if ": error[" in line}
    assert named == invalid


def test_missing_path_is_a_diagnostic_not_a_crash(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    proc = clawplane("validate", missing, "--format", "json")
    assert_clean_stderr(proc)
    assert proc.returncode == 1
    [diag] = json.loads(proc.stdout)["diagnostics"]
    assert diag["code"] == "input.not-found"
    assert_well_formed(diag, missing)
