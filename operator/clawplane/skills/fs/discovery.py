"""Which folders of one root hold a skill, found exactly as OpenClaw finds them.

Port of ``discoverSkillCandidates`` (src/skills/loading/skill-root-discovery.ts):

* a ``SKILL.md`` at the root makes the root one skill;
* a ``skills/`` folder with skills in it becomes the base (the "redirect"),
  unless the root has no SKILL.md of its own and has skills outside ``skills/``;
  a root SKILL.md next to such a base is an extra candidate;
* children are scanned in sorted order, skipping dot-folders and
  ``node_modules``; finding a SKILL.md stops the descent; grouping goes 6
  levels deep (2 for extra roots not named ``skills``);
* every candidate's real path must stay inside the root (except managed and
  personal roots); ``allowSymlinkTargets`` admits escapes only for workspace,
  project and extra roots; a SKILL.md must stay inside its skill folder;
* scans are bounded per root (candidates, raw entries, directory scans).
"""

from __future__ import annotations

import os
import stat as stat_mod
from dataclasses import dataclass

from clawplane._utils.fastinit import fast_init
from clawplane.diagnostics import Diagnostic
from clawplane.jscompat import locale_sort_key, utf16_sort_key
from clawplane.skills import codes
from clawplane.skills.fs.listing import MAX_GROUPED_DEPTH, ChildLister, new_budget, raw_limit
from clawplane.skills.fs.pathfacts import PathFacts, child_path, is_path_inside
from clawplane.skills.types import Limits, SkillRoot, Source

__all__ = ["MAX_EXTRA_GROUPED_DEPTH", "MAX_GROUPED_DEPTH", "Candidate", "Discovery", "discover"]

MAX_EXTRA_GROUPED_DEPTH = 2


@fast_init
@dataclass(frozen=True, slots=True)
class Candidate:
    """A folder with a SKILL.md that passed containment."""

    skill_dir: str
    real_dir: str
    name: str


@dataclass(frozen=True, slots=True)
class Discovery:
    """Candidates of one root, in load order."""

    candidates: tuple[Candidate, ...] = ()
    root_is_skill: bool = False
    root_candidate: Candidate | None = None


def discover(
    facts: PathFacts,
    root: SkillRoot,
    limits: Limits,
    allowed_targets: tuple[str, ...],
    diags: list[Diagnostic],
) -> Discovery:
    """The skill candidates of ``root`` (whose ``dir`` is absolute and normalized)."""
    return _Discoverer(facts, root, limits, allowed_targets, diags).run()


class _Discoverer:
    def __init__(
        self,
        facts: PathFacts,
        root: SkillRoot,
        limits: Limits,
        allowed_targets: tuple[str, ...],
        diags: list[Diagnostic],
    ) -> None:
        self.facts = facts
        self.view = facts.view
        self.source = root.source
        self.root_dir = root.dir
        self.limits = limits
        self.allowed = allowed_targets if root.source.honours_symlink_targets else ()
        self.diags = diags
        self.lister = ChildLister(facts, diags)

    # -- entry point ---------------------------------------------------------------------
    def run(self) -> Discovery:
        """The root's candidates, or none when the root is missing or escapes."""
        root_real = self.facts.real(self.root_dir)
        if root_real is None:
            self._report_unreadable_root()
            return Discovery()
        container = self.source is Source.WORKSHOP
        base = self.root_dir if container else self._nested_skills_root()
        base_real = self._candidate_real(base, root_real)
        if base_real is None:
            return Discovery()
        if not container and self.facts.has_skill_md(base):
            ok = self._skill_file_ok(base, base_real)
            single = (Candidate(base, base_real, os.path.basename(base)),) if ok else ()
            return Discovery(single, root_is_skill=True)
        root_candidate = None
        if (
            not container
            and base != self.root_dir
            and self.facts.has_skill_md(self.root_dir)
            and self._skill_file_ok(self.root_dir, root_real)
        ):
            root_candidate = Candidate(self.root_dir, root_real, os.path.basename(self.root_dir))
        candidates = self._scan_base(base, base_real)
        ordered = sorted(candidates, key=lambda c: locale_sort_key(c.name))
        return Discovery(tuple(ordered), root_candidate=root_candidate)

    def _report_unreadable_root(self) -> None:
        _st, missing = self.view.lstat_error(self.root_dir)
        if not missing:
            self.diags.append(
                codes.skill_diagnostic(
                    codes.UNREADABLE, f"cannot read skills root {self.root_dir}", self.root_dir
                )
            )

    # -- the grouped scan ----------------------------------------------------------------
    def _scan_base(self, base: str, base_real: str) -> list[Candidate]:
        max_c = max(0, self.limits.max_candidates_per_root)
        max_s = max(0, self.limits.max_skills_loaded_per_source)
        budget = new_budget(max_c)
        listing = self.lister.child_dirs(base, budget, follow=True, max_dirs=max_c)
        children = sorted(listing.dirs, key=utf16_sort_key)
        budget.truncated = budget.truncated or len(children) > max_c
        limited = [] if max_s == 0 else children[:max_c]
        if max_s > 0 and "skills" in children and "skills" not in limited:
            limited.append("skills")
        if listing.truncated or len(children) > max_c:
            self._limit_note(
                base,
                f"{len(children)} child folders; scanned the first {max_c} "
                "(skills.limits.maxCandidatesPerRoot)",
            )
        queue = [
            (
                child_path(base, name),
                name,
                0 if name == "skills" and not self.facts.has_skill_md(child_path(base, name)) else 1,
            )
            for name in limited
        ]
        found: list[Candidate] = []
        index = 0
        while index < len(queue):
            skill_dir, name, depth = queue[index]
            index += 1
            real = self._candidate_real(skill_dir, base_real)
            if real is None:
                continue
            if self.facts.has_skill_md(skill_dir):
                if self._skill_file_ok(skill_dir, real):
                    found.append(Candidate(skill_dir, real, name))
                continue
            if depth >= self._max_depth(base, skill_dir):
                continue
            nested = self.lister.child_dirs(skill_dir, budget, follow=True, max_dirs=max_c)
            budget.truncated = budget.truncated or len(nested.dirs) > max_c
            for child in sorted(nested.dirs, key=utf16_sort_key)[:max_c]:
                queue.append((child_path(skill_dir, child), f"{name}/{child}", depth + 1))
        if budget.truncated:
            self._limit_note(
                self.root_dir,
                "Skill inventory reached its discovery limit; inspect the remaining skills separately.",
            )
        return found

    def _max_depth(self, base: str, candidate: str) -> int:
        nested_root = os.path.join(base, "skills")
        shallow = (
            self.source is Source.EXTRA
            and base != os.path.join(self.root_dir, "skills")
            and os.path.basename(base) != "skills"
            and not is_path_inside(nested_root, candidate)
        )
        return MAX_EXTRA_GROUPED_DEPTH if shallow else MAX_GROUPED_DEPTH

    def _limit_note(self, path: str, message: str) -> None:
        self.diags.append(codes.skill_diagnostic(codes.DISCOVERY_LIMIT, message, path))

    # -- the skills/ redirect ----------------------------------------------------------
    def _nested_skills_root(self) -> str:
        root = self.root_dir
        nested = os.path.join(root, "skills")
        st = self.view.stat(nested)
        if st is None or not stat_mod.S_ISDIR(st.st_mode):
            return root
        limit = max(0, self.limits.max_candidates_per_root)
        if not self.facts.has_skill_md(root) and self._has_skills_outside(root, limit):
            return root
        budget = new_budget(limit)
        queue = [(nested, 0)]
        index = 0
        while index < len(queue):
            folder, depth = queue[index]
            index += 1
            if self.facts.has_skill_md(folder):
                return nested
            if depth >= MAX_GROUPED_DEPTH:
                continue
            listing = self.lister.child_dirs(folder, budget, follow=False, max_dirs=limit, report=False)
            for child in sorted(listing.dirs, key=utf16_sort_key)[:limit]:
                queue.append((os.path.join(folder, child), depth + 1))
        return root

    def _has_skills_outside(self, root: str, limit: int) -> bool:
        """OpenClaw's ``containsDiscoverableSkill`` with ``skills/`` skipped at the top."""
        budget = new_budget(limit)
        queue = [(root, 0)]
        index = 0
        while index < len(queue):
            folder, depth = queue[index]
            index += 1
            if depth > 0 and self.facts.has_skill_md(folder):
                return True
            if depth >= MAX_GROUPED_DEPTH:
                continue
            skip = "skills" if depth == 0 else None
            if self.lister.has_symlink_child(folder, skip, raw_limit(limit)):
                return True  # a linked folder might hold a skill: keep the root as base
            listing = self.lister.child_dirs(folder, budget, follow=False, max_dirs=limit, report=False)
            for child in sorted(listing.dirs, key=utf16_sort_key)[:limit]:
                if depth == 0 and child == "skills":
                    continue
                queue.append((os.path.join(folder, child), depth + 1))
        return False

    # -- containment -----------------------------------------------------------------------
    def _candidate_real(self, candidate: str, root_real: str) -> str | None:
        """OpenClaw's ``resolveSkillRootCandidatePath``."""
        if not self.source.contained:
            return self.facts.real(candidate)
        return self._contained(candidate, self.root_dir, root_real, self.allowed)

    def _contained(
        self, candidate: str, root_dir: str, root_real: str, allowed: tuple[str, ...]
    ) -> str | None:
        real = self.facts.real(candidate)
        if real is None:
            return None
        if is_path_inside(root_real, real) or any(is_path_inside(t, real) for t in allowed):
            return real
        self._warn_escape(candidate, real, root_dir, root_real)
        return None

    def _warn_escape(self, candidate: str, real: str, root_dir: str, root_real: str) -> None:
        symlink = self.facts.is_symlink(candidate)
        bundled = self.source is Source.BUNDLED
        if bundled and symlink:
            reason, code = "bundled-symlink-escape", codes.BUNDLED_SYMLINK_ESCAPE
        elif symlink:
            reason, code = "symlink-escape", codes.SYMLINK_ESCAPE
        elif bundled:
            reason, code = "bundled-root-escape", codes.BUNDLED_ROOT_ESCAPE
        else:
            reason, code = "path-escape", codes.PATH_ESCAPE
        resolved_root = "" if os.path.normpath(root_dir) == root_real else f" rootResolved={root_real}"
        message = (
            f"Skipping escaped skill path outside its configured root: source={self.source} "
            f"root={root_dir}{resolved_root} reason={reason} requested={candidate} "
            f"resolved={real}"
        )
        hint = (
            "add its target to skills.load.allowSymlinkTargets"
            if symlink and self.source.honours_symlink_targets
            else ""
        )
        self.diags.append(codes.skill_diagnostic(code, message, candidate, hint=hint))

    def _skill_file_ok(self, skill_dir: str, skill_real: str) -> bool:
        """OpenClaw's ``resolveSkillFilePath``: SKILL.md must resolve inside its folder."""
        skill_md = child_path(skill_dir, "SKILL.md")
        if self._contained(skill_md, skill_dir, skill_real, ()):
            return True
        # A dangling SKILL.md is let through here and reported when it is read.
        return self.facts.real(skill_md) is None
