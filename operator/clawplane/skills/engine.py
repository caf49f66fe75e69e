"""The skills engine: roots → discovery → precedence → gating → agent filter → snapshot.

``SkillsEngine.evaluate`` is a pure function of its ``SkillsInputs`` and the
file system; the engine object only holds caches, so keep one alive (the
reconcile loop does) and rescans of unchanged trees cost ``stat`` calls.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from clawplane._utils.gcpause import gc_paused
from clawplane.diagnostics import Diagnostic
from clawplane.jscompat import js_trim, locale_sort_key, utf16_len
from clawplane.skills.fs.fscache import FsCache
from clawplane.skills.gating import Gate
from clawplane.skills.prompt import DEFAULT_MAX_SKILLS_PROMPT_CHARS, prepare_prompt
from clawplane.skills.roots import RootLoad, load_root
from clawplane.skills.shared import SharedKey, SharedSkills, shared_key
from clawplane.skills.snapshot import AgentSnapshot, PromptInfo
from clawplane.skills.types import Host, SkillRoot, SkillsInputs

__all__ = ["SkillsEngine", "SkillsEvaluation", "resolve_user_path"]


@dataclass(frozen=True, slots=True)
class SkillsEvaluation:
    """A snapshot and the diagnostics found while building it."""

    snapshot: AgentSnapshot
    diagnostics: tuple[Diagnostic, ...]


def resolve_user_path(path: str, host: Host) -> str:
    """OpenClaw's ``resolveUserPath``: trim, expand ``~``, make absolute, normalize."""
    return _resolve_user_path(path, host.home, host.cwd)


@functools.lru_cache(maxsize=4096)
def _resolve_user_path(path: str, home: str | None, cwd: str) -> str:
    # Pure text work, asked again for every root of every agent on every render.
    text = js_trim(path)
    if (text == "~" or text.startswith("~/")) and home:
        text = home + text[1:]
    return os.path.normpath(os.path.join(cwd, text))


@dataclass(frozen=True, slots=True)
class _Previous:
    """The last evaluation for one agent and everything it depended on."""

    inputs: SkillsInputs
    loads: tuple[RootLoad, ...]
    bins: tuple[tuple[str, bool], ...]
    home_real: str | None
    evaluation: SkillsEvaluation


class SkillsEngine:
    """Builds per-agent snapshots; one instance keeps the caches that make rescans cheap."""

    def __init__(self, cache: FsCache | None = None) -> None:
        self.cache = cache or FsCache()
        self._previous: dict[str, _Previous] = {}
        # What agents share within one cache pass, dropped when the next pass begins: PATH
        # lookups keyed by (PATH, cwd), and real home folders.
        self._memo_pass = -1
        self._bins: dict[tuple[str, str], dict[str, bool]] = {}
        self._homes: dict[str, str] = {}
        self._shared_pass = -1
        self._shared: dict[SharedKey, list[SharedSkills]] = {}
        self._shared_before: dict[SharedKey, list[SharedSkills]] = {}

    def evaluate(self, inputs: SkillsInputs) -> SkillsEvaluation:
        """The agent's snapshot for these inputs, plus every diagnostic."""
        with gc_paused():
            return self._evaluate_once(inputs)

    def _evaluate_once(self, inputs: SkillsInputs) -> SkillsEvaluation:
        loads = self._load_roots(inputs)
        home_real = self._home_real(inputs.host.home)
        gate = Gate(inputs.settings, inputs.config, inputs.host)
        known = self._pass_bins(inputs)
        if known is not None:
            gate.preload(known)
        previous = self._previous.get(inputs.agent.agent_id)
        if previous is not None and _unchanged(previous, inputs, loads, home_real, gate):
            self._remember_bins(inputs, gate)
            return previous.evaluation
        shared = self._shared_for(inputs, loads, gate)
        evaluation = self._evaluate(inputs, loads, shared)
        self._remember_bins(inputs, gate)
        self._previous[inputs.agent.agent_id] = _Previous(inputs, loads, shared.bins, home_real, evaluation)
        return evaluation

    def _shared_for(self, inputs: SkillsInputs, loads: tuple[RootLoad, ...], gate: Gate) -> SharedSkills:
        """The merge and verdicts for these roots and gating inputs, made once for all agents."""
        if self.cache.pass_id != self._shared_pass:
            # Keep what the last pass used; drop what two passes in a row did not.
            self._shared_pass = self.cache.pass_id
            self._shared_before, self._shared = self._shared, {}
        key = shared_key(inputs.roots, loads, inputs.host)
        for table in (self._shared, self._shared_before):
            for candidate in table.get(key, ()):
                if candidate.matches(inputs.settings, inputs.config, inputs.host, gate):
                    if table is self._shared_before:
                        self._shared.setdefault(key, []).append(candidate)
                    return candidate
        shared = SharedSkills.build(inputs.roots, loads, gate, inputs.host)
        self._shared.setdefault(key, []).append(shared)
        return shared

    def _in_pass(self) -> bool:
        """Whether a cache pass is running; the pass memos are emptied when a new one began."""
        if self.cache.pass_id <= 0:
            return False
        if self._memo_pass != self.cache.pass_id:
            self._memo_pass, self._bins, self._homes = self.cache.pass_id, {}, {}
        return True

    def _home_real(self, home: str | None) -> str | None:
        """The home folder's real path, resolved once per cache pass (agents share a home)."""
        if not home:
            return None
        if not self._in_pass():
            return os.path.realpath(home)
        found = self._homes.get(home)
        if found is None:
            found = self._homes[home] = os.path.realpath(home)
        return found

    def _pass_bins(self, inputs: SkillsInputs) -> dict[str, bool] | None:
        return self._bins.get((inputs.host.path, inputs.host.cwd)) if self._in_pass() else None

    def _remember_bins(self, inputs: SkillsInputs, gate: Gate) -> None:
        if self._in_pass():
            self._bins.setdefault((inputs.host.path, inputs.host.cwd), {}).update(gate.probed())

    def _load_roots(self, inputs: SkillsInputs) -> tuple[RootLoad, ...]:
        host = inputs.host
        targets = _symlink_targets(inputs.settings.allow_symlink_targets, host)
        return tuple(
            load_root(
                self.cache,
                SkillRoot(resolve_user_path(root.dir, host), root.source),
                inputs.settings.limits,
                targets,
            )
            for root in inputs.roots
        )

    def _evaluate(
        self, inputs: SkillsInputs, loads: tuple[RootLoad, ...], shared: SharedSkills
    ) -> SkillsEvaluation:
        diags: list[Diagnostic] = [d for load in loads for d in load.diagnostics]
        diags.extend(shared.collisions)
        skill_filter = _normalized_filter(inputs.agent.skill_filter)
        allowed = frozenset(skill_filter) if skill_filter is not None else None
        limits = inputs.settings.limits
        prompt = prepare_prompt(
            shared.prompt_candidates(allowed),
            max_skills=limits.max_skills_in_prompt,
            max_chars=_max_chars(inputs),
            sort_key=locale_sort_key,
        )
        statuses, fragments = shared.statuses(allowed, frozenset(prompt.skills))
        snapshot = AgentSnapshot(
            agent_id=inputs.agent.agent_id,
            workspace_dir=inputs.agent.workspace_dir,
            managed_skills_dir=inputs.managed_dir,
            platform=inputs.host.platform,
            skill_filter=skill_filter,
            skills=statuses,
            prompt=PromptInfo(
                text=prompt.text,
                chars=utf16_len(prompt.text),
                skills=prompt.skills,
                format=prompt.format,
                truncated=prompt.truncated,
                description_max_chars=prompt.description_max_chars,
                max_skills=limits.max_skills_in_prompt,
                max_chars=_max_chars(inputs),
            ),
            skills_json=fragments,
        ).sealed()
        return SkillsEvaluation(snapshot, tuple(diags))


def _unchanged(
    previous: _Previous, inputs: SkillsInputs, loads: tuple[RootLoad, ...], home_real: str | None, gate: Gate
) -> bool:
    """Whether the last evaluation still holds: same inputs, same root scans, same binaries."""
    return (
        previous.inputs == inputs
        and len(previous.loads) == len(loads)
        and all(a is b for a, b in zip(previous.loads, loads, strict=True))
        and previous.home_real == home_real
        and all(gate.has_bin(name) is found for name, found in previous.bins)
    )


def _normalized_filter(skill_filter: tuple[str, ...] | None) -> tuple[str, ...] | None:
    if skill_filter is None:
        return None
    return tuple(name for name in (js_trim(n) for n in skill_filter) if name)


def _max_chars(inputs: SkillsInputs) -> int:
    agent = inputs.agent.max_prompt_chars
    if agent is not None:
        return agent
    # OpenClaw's `??`: a budget of 0 stays 0.
    configured = inputs.settings.limits.max_skills_prompt_chars
    return DEFAULT_MAX_SKILLS_PROMPT_CHARS if configured is None else configured


def _symlink_targets(targets: tuple[str, ...], host: Host) -> tuple[str, ...]:
    """``allowSymlinkTargets``: trimmed, ``~``-expanded, real paths, unresolvable ones dropped."""
    resolved: list[str] = []
    for target in targets:
        if not js_trim(target):
            continue
        try:
            real = os.path.realpath(resolve_user_path(target, host), strict=True)
        except OSError:
            continue
        if real not in resolved:
            resolved.append(real)
    return tuple(resolved)
