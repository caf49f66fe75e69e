"""Unexpected exceptions become one line and exit code 3, never a traceback."""

from __future__ import annotations

import pytest

from clawplane.cli.console import EXIT_INTERNAL, fail_cleanly


def test_unexpected_exception_exits_3_with_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAWPLANE_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exit_info, fail_cleanly():
        raise RuntimeError("boom")
    assert exit_info.value.code == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err and "Traceback" not in err


def test_debug_env_reraises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAWPLANE_DEBUG", "1")
    with pytest.raises(RuntimeError), fail_cleanly():
        raise RuntimeError("boom")
