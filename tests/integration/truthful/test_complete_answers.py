"""Answers are complete: the plan lists every file apply writes."""

from __future__ import annotations

import re

from tests.integration.truthful.conftest import Folder


def test_the_plan_lists_every_file_apply_writes(folder: Folder) -> None:
    planned = folder.cli("plan", str(folder.path))
    assert planned.returncode == 0, planned.stdout
    listed = set(re.findall(r"^  \+ (\S+) \(not rendered yet\)$", planned.stdout, flags=re.MULTILINE))
    assert "codex/coder/config.toml" in listed
    applied = folder.cli("apply", str(folder.path), "--yes")
    assert applied.returncode == 0, applied.stdout
    written = set(re.findall(r"^  wrote (\S+)$", applied.stdout, flags=re.MULTILINE))
    assert written == listed
    assert folder.cli("plan", str(folder.path), "--detailed-exitcode").returncode == 0
