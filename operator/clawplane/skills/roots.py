"""Loading every skill of one root, cached whole while nothing under it changes.

Port of OpenClaw's ``loadSkillRootRecords``: a valid root SKILL.md next to a
``skills/`` base is the root's only skill (an invalid one lets the children
load); otherwise candidates load in order until ``maxSkillsLoadedPerSource``
skills have loaded (a root that is itself a skill is not capped).
"""

from __future__ import annotations

from dataclasses import dataclass

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.skills import codes
from clawplane.skills.fs.discovery import Discovery, discover
from clawplane.skills.fs.fscache import FsCache
from clawplane.skills.fs.pathfacts import PathFacts
from clawplane.skills.loader import load_candidate
from clawplane.skills.types import Limits, SkillRecord, SkillRoot

__all__ = ["RootLoad", "load_root"]


@dataclass(frozen=True, slots=True)
class RootLoad:
    """The skills one root contributes, and why others were skipped."""

    records: tuple[SkillRecord, ...]
    diagnostics: tuple[Diagnostic, ...]


def load_root(cache: FsCache, root: SkillRoot, limits: Limits, allowed_targets: tuple[str, ...]) -> RootLoad:
    """The root's skills, reusing the last scan when none of its inputs moved."""
    key = (
        root.dir,
        root.source,
        limits.max_candidates_per_root,
        limits.max_skills_loaded_per_source,
        limits.max_skill_file_bytes,
        allowed_targets,
    )
    cached = cache.cached_root(key)
    if isinstance(cached, RootLoad):
        return cached
    view = cache.view()
    facts = PathFacts(view)
    diags: list[Diagnostic] = []
    found = discover(facts, root, limits, allowed_targets, diags)
    records = _load_records(facts, found, root, limits, diags)
    result = RootLoad(tuple(records), tuple(diags))
    cache.store_root(key, view, result, anchor=root.dir)
    return result


def _load_records(
    facts: PathFacts, found: Discovery, root: SkillRoot, limits: Limits, diags: list[Diagnostic]
) -> list[SkillRecord]:
    max_bytes = limits.max_skill_file_bytes
    if found.root_candidate is not None:
        record = load_candidate(facts, found.root_candidate, root.source, max_bytes, diags)
        if record is not None:
            return [record]
    loaded: list[SkillRecord] = []
    cap = max(0, limits.max_skills_loaded_per_source)
    for candidate in found.candidates:
        if not found.root_is_skill and len(loaded) >= cap:
            diags.append(
                codes.skill_diagnostic(
                    codes.DISCOVERY_LIMIT,
                    f"loaded the first {cap} skills of {root.dir}; the rest are ignored",
                    root.dir,
                    severity=Severity.INFO,
                    hint="raise skills.limits.maxSkillsLoadedPerSource",
                )
            )
            break
        record = load_candidate(facts, candidate, root.source, max_bytes, diags)
        if record is not None:
            loaded.append(record)
    return loaded
