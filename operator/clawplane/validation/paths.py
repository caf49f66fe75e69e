"""Paths a resource makes clawplane read or run in, checked against the folder they came from.

``valueFrom.file``, a stdio server's ``cwd`` and the Gateway's skills ``load.extraDirs`` may
name any path; one outside the resource folder (``/etc/shadow``, ``../../..``) is most likely
a mistake or an attempt to read what the folder's authors should not reach. It is a warning
(an error under ``validate --strict``) unless a Gateway lists a folder containing it in
``spec.allowedPaths``. Relative paths are relative to the resource's file, ``~`` is the home.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Gateway, McpServer
from clawplane.models.values import ValueFrom
from clawplane.validation.result import LoadedResource

__all__ = ["check_paths"]

_HINT = "move it into the folder, or list a folder that holds it in the Gateway's spec.allowedPaths"


def _absolute(raw: str, base: Path) -> Path:
    path = Path(os.path.expanduser(raw))
    return Path(os.path.realpath(path if path.is_absolute() else base / path))


def _inside(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def _references(item: LoadedResource) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    """(field path, raw path, what it is) of every path in ``item``."""
    res = item.resource
    if isinstance(res, McpServer):
        for attr in ("env", "headers"):
            for key, value in getattr(res.spec, attr).items():
                if isinstance(value, ValueFrom) and value.value_from.file is not None:
                    yield ("spec", attr, key, "valueFrom", "file"), value.value_from.file, "secret file"
        if res.spec.cwd:
            yield ("spec", "cwd"), res.spec.cwd, "working directory"
    elif isinstance(res, Gateway):
        for i, folder in enumerate(res.spec.skills.load.extra_dirs):
            yield ("spec", "skills", "load", "extraDirs", i), folder, "skills folder"
        for key, entry in res.spec.skills.entries.items():
            for name, value in entry.env.items():
                if isinstance(value, ValueFrom) and value.value_from.file is not None:
                    path = ("spec", "skills", "entries", key, "env", name, "valueFrom", "file")
                    yield path, value.value_from.file, "secret file"
        if res.spec.secrets.env_file:
            yield ("spec", "secrets", "envFile"), res.spec.secrets.env_file, "env file"


def check_paths(resources: list[LoadedResource], roots: Iterable[str | os.PathLike[str]]) -> list[Diagnostic]:
    """Warnings for paths outside ``roots`` that no Gateway's ``allowedPaths`` covers."""
    folders = [Path(os.path.realpath(r)) for r in roots]
    folders = [f if f.is_dir() else f.parent for f in folders]
    bases: dict[str, Path] = {}  # a file holds many resources: resolve its folder once

    def base_of(item: LoadedResource) -> Path:
        name = item.source.file
        base = bases.get(name)
        if base is None:
            base = bases[name] = Path(name).resolve().parent
        return base

    allowed = [
        _absolute(p, base_of(item))
        for item in resources
        if isinstance(item.resource, Gateway)
        for p in item.resource.spec.allowed_paths
    ]
    found: list[Diagnostic] = []
    for item in resources:
        references = list(_references(item))
        if not references:
            continue
        base = base_of(item)
        for field, raw, what in references:
            target = _absolute(raw, base)
            if not _inside(target, folders) and not _inside(target, allowed):
                found.append(
                    item.diagnostic(
                        Severity.WARNING,
                        "path.outside-folder",
                        f"{what} {raw!r} is outside the resource folder ({target})",
                        field,
                        hint=_HINT,
                    )
                )
    return found
