"""Which importer reads a file: chosen by ``--format`` or recognised from its name and content."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clawplane.interop.openclaw import import_openclaw_config, load_openclaw_text
from clawplane.interop.openclaw_env import OpenClawEnv
from clawplane.interop.result import ImportResult

Importer = Callable[[str, str, Path], ImportResult]
"""``(text, source name, path) → result``; raises ValueError when the text is not that format."""


def _openclaw(text: str, source: str, path: Path) -> ImportResult:
    data, positions = load_openclaw_text(text, source)
    return import_openclaw_config(data, source=source, positions=positions, env=OpenClawEnv.current(path))


IMPORTERS: dict[str, Importer] = {"openclaw": _openclaw}
"""Every format ``clawplane import`` reads, by the name ``--format`` takes."""


def detect_format(path: Path, text: str) -> str:
    """The format of ``path``: from its name where that is unambiguous, else from its top-level keys."""
    return "openclaw"


def import_file(path: Path, *, format: str | None = None) -> ImportResult:
    """Import ``path``; raises OSError (unreadable) or ValueError (not that format, unknown format)."""
    text = path.read_text(encoding="utf-8")
    chosen = format or detect_format(path, text)
    importer = IMPORTERS.get(chosen)
    if importer is None:
        raise ValueError(f"unknown format {chosen!r}; choose one of {', '.join(sorted(IMPORTERS))}")
    result = importer(text, str(path), path)
    result.format = chosen
    return result
