"""ruff, mypy --strict and the import-linter layer contracts are clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    exe = BIN / args[0]
    if not exe.exists():
        pytest.fail(f"{args[0]} is not installed; run `make setup`")
    return subprocess.run([str(exe), *args[1:]], capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_ruff_is_clean() -> None:
    dirs = [d for d in ("operator", "tests", "bench") if (ROOT / d).is_dir()]
    proc = run("ruff", "check", *dirs)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_product_is_formatted() -> None:
    """``operator/`` is as ``ruff format`` writes it (tests and benches keep their own layouts)."""
    proc = run("ruff", "format", "--check", "operator")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_is_clean() -> None:
    proc = run("mypy")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_import_layers_hold() -> None:
    proc = run("lint-imports")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_operator_is_a_source_root_not_a_package() -> None:
    assert not (ROOT / "operator" / "__init__.py").exists()
