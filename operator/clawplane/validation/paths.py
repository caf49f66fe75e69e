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
from clawplane.models import Gateway, McpServer, ValueFrom
from clawplane.validation.result import LoadedResource

__all__ = ["PathMemo", "check_paths"]

_HINT = "move it into the folder, or list a folder that holds it in the Gateway's spec.allowedPaths"


Reference = tuple[tuple[str | int, ...], str, str]
PathMemo = dict[int, tuple[LoadedResource, tuple[Reference, ...], tuple[str, ...]]]
"""Per resource object: the paths it names and, for a Gateway, its ``allowedPaths``."""


def _absolute(raw: str, base: Path) -> Path:
    path = Path(os.path.expanduser(raw))
    return Path(os.path.realpath(path if path.is_absolute() else base / path))


def _inside(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def _references(item: LoadedResource) -> Iterator[Reference]:
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


def check_paths(
    resources: list[LoadedResource],
    roots: Iterable[str | os.PathLike[str]],
    *,
    memo: PathMemo | None = None,
) -> list[Diagnostic]:
    """Warnings for paths outside ``roots`` that no Gateway's ``allowedPaths`` covers.

    ``memo``, kept from the last call on the same folder, holds the paths each resource
    object names (a validation cache hands back the same object while its file is
    unchanged); it is updated to hold exactly this set's resources. Paths are resolved
    again on every call: a symlink may have changed.
    """
    folders = [Path(os.path.realpath(r)) for r in roots]
    folders = [f if f.is_dir() else f.parent for f in folders]
    bases: dict[str, Path] = {}  # a file holds many resources: resolve its folder once

    def base_of(item: LoadedResource) -> Path:
        name = item.source.file
        base = bases.get(name)
        if base is None:
            base = bases[name] = Path(name).resolve().parent
        return base

    known = memo if memo is not None else {}
    fresh: PathMemo = {}
    for item in resources:
        hit = known.get(id(item))
        if hit is None or hit[0] is not item:
            res = item.resource
            allows = tuple(res.spec.allowed_paths) if isinstance(res, Gateway) else ()
            hit = (item, tuple(_references(item)), allows)
        fresh[id(item)] = hit
    if memo is not None:
        memo.clear()
        memo.update(fresh)
    entries = [fresh[id(item)] for item in resources]
    allowed = [_absolute(p, base_of(item)) for item, _, allows in entries for p in allows]
    found: list[Diagnostic] = []
    for item, references, _ in entries:
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
