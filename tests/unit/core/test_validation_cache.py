"""The per-file validation cache: reuse while unchanged, re-read on change, distrust fresh files."""

from __future__ import annotations

from pathlib import Path

from clawplane.validation import ValidationCache

DOC = "apiVersion: clawplane.dev/v1alpha1\nkind: Agent\nmetadata:\n  name: {name}\n"


def test_unchanged_file_is_reused_and_a_changed_one_is_read_again(tmp_path: Path) -> None:
    cache = ValidationCache(racy_window_ns=0)
    path = tmp_path / "a.yaml"
    path.write_text(DOC.format(name="a"))
    first = cache.validate_file(path)
    assert cache.validate_file(path) is first
    path.write_text(DOC.format(name="bb"))
    second = cache.validate_file(path)
    assert second is not first
    assert second.resources[0] is not None and second.resources[0].resource.name == "bb"


def test_a_file_modified_just_now_is_not_trusted(tmp_path: Path) -> None:
    cache = ValidationCache()  # default two-second racy window
    path = tmp_path / "a.yaml"
    path.write_text(DOC.format(name="a"))
    assert cache.validate_file(path) is not cache.validate_file(path)
