"""Validation: documents → typed resources, with every problem as a diagnostic."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from clawplane._utils.gcpause import gc_paused
from clawplane.diagnostics import Diagnostics
from clawplane.loading import discover_files, read_text
from clawplane.validation.cache import ValidationCache, validate_file
from clawplane.validation.paths import check_paths
from clawplane.validation.rawrefs import RawResource, raw_resource
from clawplane.validation.result import LoadedResource, ValidationResult
from clawplane.validation.semantic import check_all
from clawplane.validation.structure import validate_document


def validate_paths(
    paths: Iterable[str | os.PathLike[str]], *, cache: ValidationCache | None = None
) -> ValidationResult:
    """Load every resource under ``paths`` and validate them, collecting all diagnostics.

    With a ``cache``, files whose stat identity did not change are not read again. Paths the
    resources name outside ``paths`` are warnings (``validation.paths``).
    """
    paths = list(paths)
    with gc_paused():
        return _validate(paths, cache)


def _validate(paths: Iterable[str | os.PathLike[str]], cache: ValidationCache | None) -> ValidationResult:
    diags = Diagnostics()
    files = discover_files(paths, diags, cache.walk if cache is not None else None)
    result = ValidationResult(files=[str(f) for f in files], diagnostics=diags)
    invalid: list[RawResource] = []
    for path in files:
        found = cache.validate_file(path) if cache is not None else validate_file(path)
        result.diagnostics.extend(found.diagnostics)
        for doc, loaded in zip(found.documents, found.resources, strict=True):
            if loaded is not None:
                result.resources.append(loaded)
            elif (raw := raw_resource(doc)) is not None:
                invalid.append(raw)
    memo = cache.checks if cache is not None else None
    result.diagnostics.extend(check_all(result.resources, invalid=invalid, memo=memo))
    paths_memo = cache.paths if cache is not None else None
    result.diagnostics.extend(check_paths(result.resources, paths, memo=paths_memo))
    return result


def _walk_order(name: str) -> list[tuple[int, str]]:
    """Sort key of a file as ``os.walk`` top-down with sorted names meets it: a folder's files first."""
    *folders, file = Path(name).parts
    return [*((1, f) for f in folders), (0, file)]


def validate_texts(
    texts: Iterable[tuple[str, str]],
    *,
    over: ValidationResult | None = None,
    roots: Iterable[str | os.PathLike[str]] | None = None,
) -> ValidationResult:
    """Validate in-memory files (``(name, YAML text)``) together, as ``validate_paths`` validates files.

    With ``over`` (a folder that validated), the texts are laid over it: a resource they
    declare replaces the folder's resource of the same kind and name, the others are added,
    and the cross-resource checks run over the result. Paths the resources name are checked
    against ``roots`` (default: the texts' own names, as ``validate_paths`` of those files).
    """
    diags = Diagnostics()
    names: list[str] = []
    loaded: list[LoadedResource] = []
    invalid: list[RawResource] = []
    for name, text in texts:
        names.append(name)
        for doc in read_text(name, text, diags):
            resource, found = validate_document(doc)
            diags.extend(found)
            if resource is not None:
                loaded.append(resource)
            elif (raw := raw_resource(doc)) is not None:
                invalid.append(raw)
    resources, files = loaded, names
    if over is not None:
        # A text named as a folder file stands for that whole file, as writing it would.
        replaced, written = {item.key for item in loaded}, set(names)
        kept = [i for i in over.resources if i.key not in replaced and i.source.file not in written]
        files = sorted({*over.files, *names}, key=_walk_order)
        position = {name: n for n, name in enumerate(files)}
        # Resources in the order a folder walk finds their files (a plan lists them so).
        resources = sorted([*kept, *loaded], key=lambda item: position.get(item.source.file, len(files)))
    result = ValidationResult(resources=resources, files=files, diagnostics=diags)
    result.diagnostics.extend(check_all(resources, invalid=invalid, memo=None))
    result.diagnostics.extend(check_paths(resources, list(names if roots is None else roots)))
    return result


__all__ = ["LoadedResource", "ValidationCache", "ValidationResult", "validate_paths", "validate_texts"]
