"""``validate``'s arguments read without typer mean exactly what typer reads from them.

The console script runs a plain ``clawplane validate`` without importing typer (see
``clawplane.cli.quickargs``). Every command line the fast path accepts is also given to the
real typer command here and must reach the validator with the same parameters; every one it
declines must be one typer answers itself (help, usage errors, completion).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.unit.core.test_startup_work import QUICKSTART, fresh
from typer.testing import CliRunner

from clawplane.cli import validate as validate_command
from clawplane.cli.app import build_app
from clawplane.cli.quickargs import ValidateArgs, parse_validate
from clawplane.cli.validating import OutputFormat

Q = str(QUICKSTART)


def typer_reads(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[ValidateArgs | None, int]:
    """The parameters typer hands the validator for ``validate ARGS`` (None: it did not run)."""
    seen: list[ValidateArgs] = []

    def record(paths: list[Path], **kw: Any) -> int:
        seen.append(ValidateArgs(list(paths), **kw))
        return 0

    monkeypatch.setattr(validate_command, "run_validate", record)
    result = CliRunner().invoke(build_app("validate"), ["validate", *args])
    return (seen[0] if seen else None), result.exit_code


ACCEPTED = [
    [Q],
    [Q, "--quiet"],
    ["-q", Q, "does/not/exist"],
    [Q, "--strict", "-q"],
    ["--format", "json", Q],
    ["-f", "github", Q, "--quiet"],
    ["--format=text", Q, Q],
    ["--format", "json", "--format", "github", Q],
    ["--quiet", "--quiet", Q],
]


@pytest.mark.parametrize("args", ACCEPTED, ids=" ".join)
def test_an_accepted_command_line_means_the_same_to_typer(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    quick = parse_validate(args)
    assert quick is not None
    assert typer_reads(args, monkeypatch) == (quick, 0)


DECLINED = [
    [],
    ["--help"],
    [Q, "-h"],
    ["--quiet"],
    ["--format", "xml", Q],
    ["--format", "JSON", Q],
    ["--format"],
    [Q, "--format"],
    ["--formt", "json", Q],
    ["-qf", "json", Q],
    ["-f=json", Q],
    ["--", Q],
    ["-", Q],
    ["", Q],
    ["--no-strict", Q],
]


@pytest.mark.parametrize("args", DECLINED, ids=lambda a: " ".join(a) or "(none)")
def test_anything_else_is_left_to_typer(args: list[str]) -> None:
    assert parse_validate(args) is None


def test_shell_completion_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_CLAWPLANE_COMPLETE", "complete_bash")
    assert parse_validate([Q]) is None


def test_the_fast_path_runs_the_validator_with_its_parameters() -> None:
    quick = parse_validate(["-f", "json", "--strict", Q])
    assert quick == ValidateArgs([QUICKSTART], OutputFormat.JSON, strict=True, quiet=False)


def test_a_plain_validate_imports_no_typer_and_reports_like_typer_did() -> None:
    got = fresh(
        f"""
        import json, sys, atexit, io, contextlib
        sys.argv = ["clawplane", "validate", {Q!r}, "--format", "json"]
        buf = io.StringIO()
        def report():
            typer = sorted(m for m in sys.modules if m.split(".")[0] in ("typer", "click", "shellingham"))
            sys.__stdout__.write(json.dumps({{"typer": typer, "out": json.loads(buf.getvalue())["valid"]}}) + "\\n")
        atexit.register(report)
        from clawplane.cli import main
        with contextlib.redirect_stdout(buf):
            try:
                main()
            except SystemExit as exc:
                assert exc.code == 0, exc.code
        """
    )
    assert got == {"typer": [], "out": True}


def test_help_still_comes_from_typer() -> None:
    got = fresh(
        f"""
        import json, sys, io, contextlib
        sys.argv = ["clawplane", "validate", {Q!r}, "--help"]
        buf = io.StringIO()
        from clawplane.cli import main
        with contextlib.redirect_stdout(buf):
            try:
                main()
            except SystemExit as exc:
                code = exc.code
        print(json.dumps({{"code": code, "usage": "Usage: clawplane validate" in buf.getvalue(),
                           "typer": "typer" in sys.modules}}))
        """
    )
    assert got == {"code": 0, "usage": True, "typer": True}
