"""What the admission webhook answers for one object: clawplane's own validation, in its words.

The object is validated as ``clawplane validate`` would validate it in a folder holding the
namespace's other clawplane objects. What it alone gets wrong (schema, OpenClaw's config rules,
the env blocklist) refuses it; so does a problem it would cause in another object (two servers
whose names collide once OpenClaw sanitizes them). A reference to an object not applied yet is
never a refusal: GitOps tools apply in any order, so it is a warning (kubectl prints it) and the
operator reports ``ResolvedRefs=False`` until the object arrives.

The namespace's other objects are validated once and kept (``Baseline``): the next review
re-validates only those whose resourceVersion changed, and lays the object under review over the
rest, so a bulk apply of N objects costs N small validations rather than N whole-namespace ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from clawplane.diagnostics import Diagnostic, Diagnostics, Severity
from clawplane.k8s.adapter.materialize import document, key_of, relative_path
from clawplane.models import KINDS
from clawplane.validation import ValidationResult, validate_texts

PREFIX = "clawplane: "
"""How refusals and warnings begin, so a user knows who is speaking."""
MAX_WARNING = 256
"""Kubernetes may truncate a warning longer than this; ours (prefix included) are cut with an ellipsis."""
MAX_WARNINGS = 20
"""kubectl prints every warning; past this many, the rest are in ``clawplane validate``."""
MAX_MESSAGE = 4096
"""The refusal's length bound: many errors are summarized by count past it."""


@dataclass(frozen=True)
class Verdict:
    """Allowed or refused, with the reasons in clawplane's words."""

    allowed: bool
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def message(self) -> str:
        """The refusal as kubectl shows it (empty when allowed)."""
        if self.allowed:
            return ""
        text, shown = "", 0
        for line in self.errors:
            if len(text) + len(line) + 2 > MAX_MESSAGE:
                break
            text, shown = f"{text}; {line}" if text else line, shown + 1
        rest = len(self.errors) - shown
        return text + (f"; and {rest} more (run `clawplane validate` on the object)" if rest else "")


def describe(diag: Diagnostic, subject: str | None = None) -> str:
    """One diagnostic on one line: ``error[code] at path: message (hint: ...)``."""
    where = f" at {diag.path}" if diag.path else ""
    about = f"{subject}: " if subject else ""
    hint = f" (hint: {diag.hint})" if diag.hint else ""
    return f"{about}{diag.severity.value}[{diag.code}]{where}: {diag.message}{hint}"


def _short(text: str) -> str:
    room = MAX_WARNING - len(PREFIX)
    return text if len(text) <= room else text[: room - 1] + "…"


def _file(cr: dict[str, Any]) -> str:
    return relative_path(cr["kind"], cr["metadata"]["name"])


Fingerprint = tuple[str, str, str, str]


def _fingerprint(diag: Diagnostic) -> Fingerprint:
    return (diag.resource, diag.code, diag.path, diag.message)


def _version(cr: dict[str, Any]) -> str:
    # Objects from the API server carry a resourceVersion; anything else is compared by content.
    return str((cr.get("metadata") or {}).get("resourceVersion") or "") or document(cr)


@dataclass(frozen=True)
class Baseline:
    """A namespace's objects (but the one under review), validated; reused while they do not change."""

    versions: dict[str, str]
    result: ValidationResult
    before: frozenset[Fingerprint]


def baseline(others: Iterable[dict[str, Any]], previous: Baseline | None = None) -> Baseline:
    """``others`` validated, re-validating only what changed since ``previous``."""
    crs = {key_of(cr): cr for cr in others if cr.get("kind") in KINDS}
    versions = {key: _version(cr) for key, cr in crs.items()}
    if previous is not None and previous.versions == versions:
        return previous
    if previous is None:
        # Over an empty result: objects in folder-walk order, as every later (incremental) round has them.
        empty = ValidationResult(diagnostics=Diagnostics())
        result = validate_texts([(_file(cr), document(cr)) for cr in crs.values()], over=empty)
    else:
        changed = [cr for key, cr in crs.items() if previous.versions.get(key) != versions[key]]
        gone = (set(previous.versions) - set(versions)) | {key_of(cr) for cr in changed}
        files = {relative_path(*key.split("/", 1)) for key in gone}
        kept = ValidationResult(
            resources=[r for r in previous.result.resources if r.key not in gone],
            files=[f for f in previous.result.files if f not in files],
            diagnostics=Diagnostics(),
        )
        result = validate_texts([(_file(cr), document(cr)) for cr in changed], over=kept)
    return Baseline(versions, result, frozenset(_fingerprint(d) for d in result.diagnostics))


def review(
    obj: dict[str, Any], others: Iterable[dict[str, Any]], previous: Baseline | None = None
) -> Verdict:
    """The verdict on ``obj`` (a clawplane custom resource) given the namespace's ``others``."""
    return review_with(obj, others, previous)[0]


def review_with(
    obj: dict[str, Any], others: Iterable[dict[str, Any]], previous: Baseline | None = None
) -> tuple[Verdict, Baseline]:
    """The verdict, and the baseline it was reached over (for the next review in the namespace)."""
    base = baseline(_rest(obj, others), previous)
    return review_over(obj, base), base


def _rest(obj: dict[str, Any], others: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    key = key_of(obj) if obj.get("kind") in KINDS else None
    return [cr for cr in others if cr.get("kind") in KINDS and key_of(cr) != key]


def review_over(obj: dict[str, Any], base: Baseline) -> Verdict:
    """The verdict on ``obj`` laid over the validated rest of its namespace."""
    if obj.get("kind") not in KINDS:
        return Verdict(True)
    key = key_of(obj)
    before = base.before
    after = validate_texts([(_file(obj), document(obj))], over=base.result)
    errors: list[str] = []
    warnings: list[str] = []
    for diag in after.diagnostics:
        own = diag.resource == key
        if own and diag.code.startswith("ref."):
            # Order of applies is not ours to choose: the operator waits for the object.
            where = f" (at {diag.path})" if diag.path else ""
            waits = "used once it is applied, ResolvedRefs=False until then"
            warnings.append(_short(f"[{diag.code}] {diag.message}{where}: {waits}"))
        elif own and diag.is_error:
            errors.append(describe(diag))
        elif own and diag.severity is Severity.WARNING:
            warnings.append(_short(describe(diag)))
        elif diag.code.startswith("ref.") or _fingerprint(diag) in before:
            continue  # another object's own problem, there before this one came
        elif diag.is_error:
            errors.append(describe(diag, f"it would make {diag.resource or 'another object'} invalid"))
        elif diag.severity is Severity.WARNING:
            # Which of two colliding objects is blamed follows file order; the newcomer hears of it.
            warnings.append(
                _short(describe(diag, f"with this object, {diag.resource or 'another object'} has"))
            )
    return Verdict(not errors, errors, warnings[:MAX_WARNINGS])
