"""Paths in rendered configs: absolute, because runtimes do not know where a resource file was."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from clawplane.models import Resource


def absolute_path(path: str, base_dir: Path) -> str:
    """``path`` made absolute against ``base_dir``; ``~`` paths are kept for the runtime to expand."""
    if path.startswith("~"):
        return path
    if os.path.isabs(path):
        return os.path.normpath(path)
    return os.path.normpath(base_dir / path)


def base_dir_of(resource: Resource, base_dirs: Mapping[str, Path]) -> Path:
    """The folder of ``resource``'s file (keyed ``Kind/name`` in ``base_dirs``), else the working dir."""
    found = base_dirs.get(resource.key)
    return found if found is not None else Path.cwd()
