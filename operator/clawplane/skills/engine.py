"""The skills engine: roots → discovery → precedence → gating → agent filter → snapshot.

``SkillsEngine.evaluate`` is a pure function of its ``SkillsInputs`` and the
file system; the engine object only holds caches, so keep one alive (the
reconcile loop does) and rescans of unchanged trees cost ``stat`` calls.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from clawplane.diagnostics import Diagnostic
from clawplane.naming import js_trim, utf16_len
from clawplane.skills.collation import locale_sort_key
from clawplane.skills.fscache import FsCache
from clawplane.skills.gating import Gate, SkillGating
from clawplane.skills.installoptions import install_options
from clawplane.skills.merge import merge_records
from clawplane.skills.prompt import (
    DEFAULT_MAX_SKILLS_PROMPT_CHARS,
    PromptResult,
    PromptSkill,
    compact_home_paths,
    prepare_prompt,
)
from clawplane.skills.roots import RootLoad, load_root
from clawplane.skills.snapshot import AgentSnapshot, PromptInfo, SkillStatus
from clawplane.skills.types import Host, SkillRecord, SkillRoot, SkillsInputs

__all__ = ["SkillsEngine", "SkillsEvaluation", "resolve_user_path"]


@dataclass(frozen=True, slots=True)
class SkillsEvaluation:
    """A snapshot and the diagnostics found while building it."""

    snapshot: AgentSnapshot
    diagnostics: tuple[Diagnostic, ...]


def resolve_user_path(path: str, host: Host) -> str:
    """OpenClaw's ``resolveUserPath``: trim, expand ``~``, make absolute, normalize."""
    text = js_trim(path)
    if (text == "~" or text.startswith("~/")) and host.home:
        text = host.home + text[1:]
    return os.path.normpath(os.path.join(host.cwd, text))


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
        # PATH lookups made during the current cache pass, keyed by (PATH, cwd): agents share them.
        self._bins_pass = -1
        self._bins: dict[tuple[str, str], dict[str, bool]] = {}

    def evaluate(self, inputs: SkillsInputs) -> SkillsEvaluation:
        """The agent's snapshot for these inputs, plus every diagnostic."""
        loads = self._load_roots(inputs)
        home_real = os.path.realpath(inputs.host.home) if inputs.host.home else None
        gate = Gate(inputs.settings, inputs.config, inputs.host)
        known = self._pass_bins(inputs)
        if known is not None:
            gate.preload(known)
        previous = self._previous.get(inputs.agent.agent_id)
        if previous is not None and _unchanged(previous, inputs, loads, home_real, gate):
            self._remember_bins(inputs, gate)
            return previous.evaluation
        evaluation = self._evaluate(inputs, loads, gate)
        self._remember_bins(inputs, gate)
        self._previous[inputs.agent.agent_id] = _Previous(
            inputs, loads, tuple(sorted(gate.probed().items())), home_real, evaluation)
        return evaluation

    def _pass_bins(self, inputs: SkillsInputs) -> dict[str, bool] | None:
        if self.cache.pass_id <= 0 or self._bins_pass != self.cache.pass_id:
            return None
        return self._bins.get((inputs.host.path, inputs.host.cwd))

    def _remember_bins(self, inputs: SkillsInputs, gate: Gate) -> None:
        if self.cache.pass_id <= 0:
            return
        if self._bins_pass != self.cache.pass_id:
            self._bins_pass, self._bins = self.cache.pass_id, {}
        self._bins.setdefault((inputs.host.path, inputs.host.cwd), {}).update(gate.probed())

    def _load_roots(self, inputs: SkillsInputs) -> tuple[RootLoad, ...]:
        host = inputs.host
        targets = _symlink_targets(inputs.settings.allow_symlink_targets, host)
        return tuple(
            load_root(self.cache, SkillRoot(resolve_user_path(root.dir, host), root.source),
                      inputs.settings.limits, targets)
            for root in inputs.roots)

    def _evaluate(self, inputs: SkillsInputs, loads: tuple[RootLoad, ...],
                  gate: Gate) -> SkillsEvaluation:
        diags: list[Diagnostic] = [d for load in loads for d in load.diagnostics]
        merged, collisions = merge_records(
            [(root, load.records) for root, load in zip(inputs.roots, loads, strict=True)],
            inputs.host.home)
        diags.extend(collisions)
        verdicts = [(record, gate.evaluate(record)) for record in merged]
        prompt = self._prompt(inputs, verdicts)
        in_prompt = set(prompt.skills)
        statuses = tuple(self._status(inputs, gate, r, v, in_prompt) for r, v in verdicts)
        limits = inputs.settings.limits
        snapshot = AgentSnapshot(
            agent_id=inputs.agent.agent_id, workspace_dir=inputs.agent.workspace_dir,
            managed_skills_dir=inputs.managed_dir, platform=inputs.host.platform,
            skill_filter=_normalized_filter(inputs.agent.skill_filter), skills=statuses,
            prompt=PromptInfo(
                text=prompt.text, chars=utf16_len(prompt.text), skills=prompt.skills,
                format=prompt.format, truncated=prompt.truncated,
                description_max_chars=prompt.description_max_chars,
                max_skills=limits.max_skills_in_prompt, max_chars=_max_chars(inputs)),
        ).sealed()
        return SkillsEvaluation(snapshot, tuple(diags))

    def _prompt(self, inputs: SkillsInputs,
                verdicts: list[tuple[SkillRecord, SkillGating]]) -> PromptResult:
        allowed = _normalized_filter(inputs.agent.skill_filter)
        entries = [
            PromptSkill(record.name, record.description, record.file_path)
            for record, verdict in verdicts
            if verdict.prompt_eligible and (allowed is None or record.name in allowed)
            and not record.invocation.disable_model_invocation
        ]
        limits = inputs.settings.limits
        return prepare_prompt(compact_home_paths(entries, inputs.host.home),
                              max_skills=limits.max_skills_in_prompt,
                              max_chars=_max_chars(inputs), sort_key=locale_sort_key)

    def _status(self, inputs: SkillsInputs, gate: Gate, record: SkillRecord,
                verdict: SkillGating, in_prompt: set[str]) -> SkillStatus:
        allowed = _normalized_filter(inputs.agent.skill_filter)
        filtered = allowed is not None and record.name not in allowed
        manifest = record.manifest
        available = verdict.eligible and not filtered
        user_invocable = record.invocation.user_invocable
        model_visible = available and not record.invocation.disable_model_invocation
        settings = inputs.settings
        return SkillStatus(
            name=record.name, description=record.description, skill_key=record.skill_key,
            source=str(record.source), tier=str(record.source.tier), file_path=record.file_path,
            base_dir=record.base_dir, content_hash=record.content_hash,
            emoji=(manifest.emoji if manifest and manifest.emoji is not None
                   else record.frontmatter.get("emoji")) or None,
            homepage=_homepage(record), primary_env=manifest.primary_env if manifest else None,
            always=verdict.always, disabled=verdict.disabled,
            blocked_by_allowlist=verdict.blocked_by_allowlist, blocked_by_agent_filter=filtered,
            eligible=verdict.eligible, prompt_eligible=verdict.prompt_eligible,
            model_visible=model_visible, user_invocable=user_invocable,
            command_visible=available and user_invocable, in_prompt=record.name in in_prompt,
            requirements=verdict.required, missing=verdict.missing,
            config_checks=verdict.config_checks,
            install=install_options(
                manifest.install if manifest else (), manifest.os if manifest else (),
                inputs.host.platform, prefer_brew=settings.prefer_brew,
                node_manager=settings.node_manager, has_bin=gate.has_bin),
            reasons=_reasons(record, verdict, filtered, record.name in in_prompt),
        )


def _unchanged(previous: _Previous, inputs: SkillsInputs, loads: tuple[RootLoad, ...],
               home_real: str | None, gate: Gate) -> bool:
    """Whether the last evaluation still holds: same inputs, same root scans, same binaries."""
    return (
        previous.inputs == inputs
        and len(previous.loads) == len(loads)
        and all(a is b for a, b in zip(previous.loads, loads, strict=True))
        and previous.home_real == home_real
        and all(gate.has_bin(name) is found for name, found in previous.bins)
    )


def _reasons(record: SkillRecord, verdict: SkillGating, filtered: bool,
             in_prompt: bool) -> tuple[str, ...]:
    reasons: list[str] = []
    if verdict.disabled:
        reasons.append("disabled")
    if verdict.blocked_by_allowlist:
        reasons.append("blocked-by-allowlist")
    if verdict.missing.os:
        reasons.append("platform-incompatible")
    missing = verdict.missing
    if missing.bins or missing.any_bins or missing.env or missing.config:
        reasons.append("missing-requirements")
    if filtered:
        reasons.append("agent-filter")
    usable = verdict.eligible and not filtered
    if usable and record.invocation.disable_model_invocation:
        reasons.append("disable-model-invocation")
    if usable and not record.invocation.user_invocable:
        reasons.append("not-user-invocable")
    visible = usable and not record.invocation.disable_model_invocation
    if visible and not verdict.prompt_eligible:
        reasons.append("prompt-platform-mismatch")
    elif visible and not in_prompt:
        reasons.append("prompt-budget")
    return tuple(reasons)


def _homepage(record: SkillRecord) -> str | None:
    manifest = record.manifest
    fm = record.frontmatter
    raw = manifest.homepage if manifest and manifest.homepage is not None else None
    for candidate in (raw, fm.get("homepage"), fm.get("website"), fm.get("url")):
        if candidate is not None:
            return js_trim(candidate) or None
    return None


def _normalized_filter(skill_filter: tuple[str, ...] | None) -> tuple[str, ...] | None:
    if skill_filter is None:
        return None
    return tuple(name for name in (js_trim(n) for n in skill_filter) if name)


def _max_chars(inputs: SkillsInputs) -> int:
    agent = inputs.agent.max_prompt_chars
    if agent is not None:
        return agent
    return inputs.settings.limits.max_skills_prompt_chars or DEFAULT_MAX_SKILLS_PROMPT_CHARS


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
