"""Rendered files written: every output from the observed state, the changed ones on disk.

Shared by the applier (after a plan's actions), token rotation (new tokens rewrite the configs
that carry them) and the engine (which compares what is recorded with what would be written).
Render problems (``render.*`` diagnostics) are stored with the files, for ``status``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from clawplane._utils.safedir import SafeDir
from clawplane.desired import DesiredState
from clawplane.diagnostics import Diagnostic, Severity
from clawplane.reconcile.rendered.outputs import OutputRenderer
from clawplane.reconcile.statusview import RENDER_PROBLEMS_KEY
from clawplane.render.files import open_out_dir, remove_under, write_under
from clawplane.state import StateDB, store, tokens

__all__ = ["content_digest", "is_render_problem", "problem_doc", "write_outputs"]


def write_outputs(
    desired: DesiredState,
    db: StateDB,
    renderer: OutputRenderer,
    out_dir: Path,
    *,
    errors: list[str] | None = None,
) -> tuple[list[str], list[str]]:
    """Render every output from the observed state, write those that changed, drop stale ones.

    Issues a bearer token for every consumer that needs one and records what each token
    reaches. Returns the paths written and removed. With ``errors``, a file the disk refuses
    (full, read-only) is added there and skipped (the state records only what is on disk,
    so the next pass retries it); without, the OSError is raised. Every file is written
    through the output folder's descriptor, which is refused (``UnsafePathError``) if another
    user could aim writes there.
    """
    observed = store.load_observed(db)
    rendered = renderer.render(desired, observed)
    if renderer.missing_tokens:
        # A consumer needs a bearer token it has not been issued yet: issue it, render again.
        tokens.ensure_tokens(db, renderer.missing_tokens)
        observed = store.load_observed(db)
        rendered = renderer.render(desired, observed)
    written: list[str] = []
    removed: list[str] = []
    try:
        out = open_out_dir(out_dir)
    except OSError as exc:
        if errors is None:
            raise
        errors.append(f"{out_dir}: {exc.strerror or exc}")  # nothing is recorded: the next pass retries
    else:
        with out:
            _write_rendered(db, out, rendered, written, removed, observed.outputs, errors)
    if renderer.auth_header is None:
        tokens.set_access(db, renderer.access)
    problems = [problem_doc(d) for d in renderer.diagnostics if is_render_problem(d)]
    store.set_meta(db, RENDER_PROBLEMS_KEY, json.dumps(problems, sort_keys=True))
    return written, removed


def _write_rendered(
    db: StateDB,
    out: SafeDir,
    rendered: dict[str, str],
    written: list[str],
    removed: list[str],
    recorded: dict[str, str],
    errors: list[str] | None,
) -> None:
    for rel, content in sorted(rendered.items()):
        try:
            changed = write_under(out, rel, content)
        except OSError as exc:
            if errors is None:
                raise
            errors.append(f"{rel}: {exc.strerror or exc}")
            continue
        if changed:
            written.append(rel)
        store.put_output(db, rel, content_digest(content))
    for rel in sorted(set(recorded) - set(rendered)):
        try:
            remove_under(out, rel)
        except OSError as exc:
            if errors is None:
                raise
            errors.append(f"{rel}: {exc.strerror or exc}")
            continue
        store.delete_output(db, rel)
        removed.append(rel)


def is_render_problem(d: Diagnostic) -> bool:
    """A ``render.*`` warning or error: something a rendered config could not express."""
    return d.code.startswith("render.") and d.severity is not Severity.INFO


def problem_doc(d: Diagnostic) -> dict[str, Any]:
    """A render problem as stored and printed (messages are redacted already)."""
    return {"severity": d.severity.value, "code": d.code, "message": d.message, "resource": d.resource,
            "path": d.path, "hint": d.hint}  # fmt: skip


def content_digest(content: str) -> str:
    """The hash recorded for a rendered file."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]
