"""Validation: documents → typed resources, with every problem as a diagnostic."""

from __future__ import annotations

import os
from collections.abc import Iterable

from clawplane.loading import read_sources
from clawplane.validation.result import LoadedResource, ValidationResult
from clawplane.validation.semantic import check_all
from clawplane.validation.structure import validate_document


def validate_paths(paths: Iterable[str | os.PathLike[str]]) -> ValidationResult:
    """Load every resource under ``paths`` and validate them, collecting all diagnostics."""
    read = read_sources(paths)
    result = ValidationResult(files=read.files, diagnostics=read.diagnostics)
    invalid: list[tuple[str, str]] = []
    for doc in read.documents:
        loaded, found = validate_document(doc)
        result.diagnostics.extend(found)
        if loaded is not None:
            result.resources.append(loaded)
        elif (named := _kind_and_name(doc.data)) is not None:
            invalid.append(named)
    result.diagnostics.extend(check_all(result.resources, invalid=invalid))
    return result


def _kind_and_name(data: object) -> tuple[str, str] | None:
    if isinstance(data, dict) and isinstance(data.get("metadata"), dict):
        name = data["metadata"].get("name")
        if isinstance(data.get("kind"), str) and isinstance(name, str):
            return data["kind"], name
    return None


__all__ = ["LoadedResource", "ValidationResult", "validate_paths"]
