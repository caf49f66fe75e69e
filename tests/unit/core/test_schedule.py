"""The suite's run order: longest recorded files first, each file's tests together and in order."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.support import schedule


def _items(*ids: str) -> list[Any]:
    return [SimpleNamespace(nodeid=i) for i in ids]


def test_files_are_ordered_longest_first_and_kept_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schedule, "known", lambda: {"a.py": 1.5, "b.py": 90.0})
    items = _items("a.py::t1", "b.py::t1", "a.py::t2", "new.py::t1", "b.py::t2[x]")
    schedule.longest_first(items)
    assert [i.nodeid for i in items] == ["b.py::t1", "b.py::t2[x]", "new.py::t1", "a.py::t1", "a.py::t2"]


def test_a_missing_or_broken_record_changes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for text in (None, "not json", "[1, 2]"):
        target = tmp_path / "durations.json"
        if text is not None:
            target.write_text(text)
        monkeypatch.setattr(schedule, "DURATIONS", target)
        assert schedule.known() == {}
        items = _items("b.py::t", "a.py::t", "b.py::u")
        schedule.longest_first(items)
        assert [i.nodeid for i in items] == ["b.py::t", "b.py::u", "a.py::t"]


def test_the_recorder_sums_phases_per_file(tmp_path: Path) -> None:
    target = tmp_path / "d.json"
    recorder = schedule.Recorder(target)
    for nodeid, duration in (("x.py::a", 2.0), ("x.py::a", 0.5), ("x.py::b", 1.0), ("y.py::a", 0.2)):
        recorder.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=duration))  # type: ignore[arg-type]
    recorder.pytest_sessionfinish(SimpleNamespace(config=SimpleNamespace()))  # type: ignore[arg-type]
    assert json.loads(target.read_text()) == {"x.py": 3.5, "y.py": 0.2}


def test_the_committed_record_is_mostly_current() -> None:
    """A renamed file only loses its place in the order; most of the record must still apply."""
    root = schedule.DURATIONS.parents[2]
    recorded = schedule.known()
    assert len(recorded) > 50
    assert sum((root / f).is_file() for f in recorded) >= 0.9 * len(recorded)
