"""Custom resources → a folder the engine validates, with a fallback for resources that do not.

Each live custom resource becomes one file (``<plural>/<name>.yaml``, written as JSON, which is YAML).
A resource whose new spec is invalid keeps running on its last accepted spec, and one
never accepted is left out, so one bad object never blocks or tears down the others.
Excluding a resource can break another's references, so validation repeats until the
remaining set is valid. The copies are 0600 in 0700 folders whatever the umask (a spec may
hold literal values), written through the folder's descriptor (``open_dir``).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawplane._utils.safedir import SafeDir, open_dir
from clawplane.diagnostics import Diagnostic
from clawplane.models import API_VERSION, KINDS
from clawplane.render.files import remove_under, write_under
from clawplane.validation import ValidationCache, ValidationResult, validate_paths

MAX_ROUNDS = 8


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a resource's current spec is not what runs."""

    reason: str  # Invalid | RefNotFound
    message: str


@dataclass
class Materialized:
    """The outcome of one validation: accepted generations and per-resource problems."""

    result: ValidationResult
    problems: dict[str, Problem] = field(default_factory=dict)
    stale: set[str] = field(default_factory=set)
    """Keys running on their last accepted spec instead of the current one."""
    accepted_generation: dict[str, int] = field(default_factory=dict)
    in_effect: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The spec each resource runs on: its current one, or its last accepted one when stale."""


def document(cr: dict[str, Any]) -> str:
    """The engine's view of a custom resource: envelope, name and spec only."""
    doc = {
        "apiVersion": API_VERSION,
        "kind": cr["kind"],
        "metadata": {"name": cr["metadata"]["name"]},
        "spec": cr.get("spec") or {},
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def key_of(cr: dict[str, Any]) -> str:
    """``Kind/name``, the engine's resource key."""
    return f"{cr['kind']}/{cr['metadata']['name']}"


def relative_path(kind: str, name: str) -> str:
    """Where the resource ``kind/name`` is written in a namespace's folder: ``<plural>/<name>.yaml``."""
    return f"{KINDS[kind].PLURAL}/{name}.yaml"


def _describe(diag: Diagnostic) -> str:
    where = f"{diag.path}: " if diag.path else ""
    hint = f" ({diag.hint})" if diag.hint else ""
    return f"{where}{diag.message}{hint}"


class Materializer:
    """Keeps one namespace's folder in step with its custom resources."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.cache = ValidationCache()
        self._last_good: dict[str, tuple[str, int]] = {}

    def path_of(self, kind: str, name: str) -> Path:
        """Where the resource ``kind/name`` is written."""
        return self.folder / relative_path(kind, name)

    def sync(self, crs: Iterable[dict[str, Any]]) -> Materialized:
        """Write every resource, validate, and fall back for the ones that fail."""
        wanted = {key_of(cr): (cr, document(cr)) for cr in crs}
        self._write({k: text for k, (_, text) in wanted.items()})
        problems: dict[str, Problem] = {}
        texts = {k: text for k, (_, text) in wanted.items()}
        fell_back: set[str] = set()
        for _ in range(MAX_ROUNDS):
            result = validate_paths([self.folder], cache=self.cache)
            bad = self._failures(result, texts)
            if not bad:
                break
            for key, problem in bad.items():
                problems.setdefault(key, problem)
                good = self._last_good.get(key)
                texts.pop(key)
                if good is not None and key not in fell_back and good[0] != wanted[key][1]:
                    texts[key] = good[0]
                    fell_back.add(key)
            self._write(texts)
        out = Materialized(result, problems)
        for key, text in texts.items():
            cr = wanted[key][0]
            generation = int(cr["metadata"].get("generation") or 1)
            # The live object's own spec where it is in effect; parsed back only for a fallback.
            out.in_effect[key] = json.loads(text)["spec"] if key in problems else (cr.get("spec") or {})
            if key in problems:
                out.stale.add(key)
                out.accepted_generation[key] = self._last_good[key][1]
            elif result.ok:
                self._last_good[key] = (text, generation)
                out.accepted_generation[key] = generation
        for key in set(self._last_good) - set(wanted):
            del self._last_good[key]
        return out

    def _failures(self, result: ValidationResult, texts: dict[str, str]) -> dict[str, Problem]:
        by_file = {str(self.path_of(*key.split("/", 1))): key for key in texts}
        bad: dict[str, Problem] = {}
        for diag in result.diagnostics.errors:
            file = diag.location.file if diag.location else None
            key = by_file.get(str(Path(file).resolve())) if file else None
            if key is None:
                continue
            reason = "RefNotFound" if diag.code.startswith("ref.") else "Invalid"
            if key in bad:
                bad[key] = Problem(bad[key].reason, f"{bad[key].message}; {_describe(diag)}")
            else:
                bad[key] = Problem(reason, _describe(diag))
        if not result.ok and not bad:
            # Errors no single resource owns (e.g. two Gateways): drop nothing, report on all.
            message = "; ".join(_describe(d) for d in result.diagnostics.errors)
            return {key: Problem("Invalid", message) for key in texts if key.startswith("Gateway/")} or {
                key: Problem("Invalid", message) for key in texts
            }
        return bad

    def _write(self, texts: dict[str, str]) -> None:
        with open_dir(self.folder) as root:
            present = _copies(root)
            keep: set[str] = set()
            for key, text in texts.items():
                rel = relative_path(*key.split("/", 1))
                keep.add(rel)
                write_under(root, rel, text)
            for rel in present - keep:
                remove_under(root, rel)


def _copies(root: SafeDir) -> set[str]:
    """The ``<plural>/<name>.yaml`` files below ``root`` (links and other entries are not followed)."""
    found: set[str] = set()
    for plural in os.listdir(root.fd):
        info = root.lstat(plural)
        if info is None or not stat.S_ISDIR(info.st_mode):
            continue
        with root.child(plural, create=False) as folder:
            found |= {f"{plural}/{name}" for name in os.listdir(folder.fd) if name.endswith(".yaml")}
    return found
