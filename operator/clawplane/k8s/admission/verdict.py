"""What the admission webhook answers for one object: clawplane's own validation, in its words.

The object is validated as ``clawplane validate`` would validate it in a folder holding the
namespace's other clawplane objects. What it alone gets wrong (schema, OpenClaw's config rules,
the env blocklist) refuses it; so does a problem it would cause in another object (two servers
whose names collide once OpenClaw sanitizes them). A reference to an object not applied yet is
never a refusal: GitOps tools apply in any order, so it is a warning (kubectl prints it) and the
operator reports ``ResolvedRefs=False`` until the object arrives.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from clawplane.diagnostics import Diagnostic
from clawplane.k8s.materialize import document, key_of
from clawplane.models import KINDS
from clawplane.validation import validate_texts

MAX_WARNING = 256
"""Kubernetes may truncate a warning longer than this; ours are cut with an ellipsis instead."""
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
    return text if len(text) <= MAX_WARNING else text[: MAX_WARNING - 1] + "…"


def _file(cr: dict[str, Any]) -> str:
    return f"{KINDS[cr['kind']].PLURAL}/{cr['metadata']['name']}.yaml"


def _fingerprint(diag: Diagnostic) -> tuple[str, str, str, str]:
    return (diag.resource, diag.code, diag.path, diag.message)


def review(obj: dict[str, Any], others: Iterable[dict[str, Any]]) -> Verdict:
    """The verdict on ``obj`` (a clawplane custom resource) given the namespace's ``others``."""
    if obj.get("kind") not in KINDS:
        return Verdict(True)
    key = key_of(obj)
    rest = [cr for cr in others if cr.get("kind") in KINDS and key_of(cr) != key]
    before = {_fingerprint(d) for d in validate_texts([(_file(cr), document(cr)) for cr in rest]).diagnostics}
    after = validate_texts([(_file(cr), document(cr)) for cr in [*rest, obj]])
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
        elif own and diag.severity.value == "warning":
            warnings.append(_short(describe(diag)))
        elif diag.is_error and not diag.code.startswith("ref.") and _fingerprint(diag) not in before:
            errors.append(describe(diag, f"it would make {diag.resource or 'another object'} invalid"))
    return Verdict(not errors, errors, warnings)
