"""What agents with the same skill roots and gating inputs share: one merge, one gating pass.

Two agents whose non-empty roots load the same records, under equal settings,
config and host, differ only by their skill filter (and prompt budget). A
``SharedSkills`` holds the merged records and their verdicts once, and builds
each skill's status in the (at most three) forms an agent's filter can give it:
filtered, unfiltered and in the prompt, unfiltered and not. Statuses and their
JSON fragments are made on first use and shared by every agent's snapshot, so a
fleet of N agents over S skills costs S gating checks and O(S) list copies per
agent instead of N·S statuses and N·S dictionaries serialized.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clawplane.diagnostics import Diagnostic
from clawplane.jscompat import js_trim
from clawplane.skills.gating import Gate, SkillGating
from clawplane.skills.installoptions import install_options
from clawplane.skills.merge import merge_records
from clawplane.skills.prompt import PromptSkill, compact_home_paths
from clawplane.skills.roots import RootLoad
from clawplane.skills.snapshot import SkillsJson, SkillStatus, compact_dumps
from clawplane.skills.types import Host, SkillRecord, SkillRoot, SkillsSettings

__all__ = ["SharedKey", "SharedSkills", "shared_key"]

# (root position, source, the load) of every root that contributed records.
SharedKey = tuple[tuple[tuple[int, str, int], ...], str, str, str, str | None]


def shared_key(roots: Sequence[SkillRoot], loads: Sequence[RootLoad], host: Host) -> SharedKey:
    """The hashable part of what a shared evaluation depends on (settings and config compare by value)."""
    used = tuple(
        (index, str(root.source), id(load))
        for index, (root, load) in enumerate(zip(roots, loads, strict=True))
        if load.records
    )
    return used, host.path, host.cwd, host.platform, host.home


@dataclass(eq=False)
class SharedSkills:
    """The merged records and verdicts for one distinct input, and the statuses built from them."""

    settings: SkillsSettings
    config: Mapping[str, Any]
    host: Host
    loads: tuple[RootLoad, ...]
    """Kept so the ids in the key stay those of live objects."""
    records: list[SkillRecord]
    verdicts: list[SkillGating]
    collisions: tuple[Diagnostic, ...]
    bins: tuple[tuple[str, bool], ...]
    """Every PATH lookup the gating made, to tell later whether it still holds."""
    index: dict[str, int]
    prompt_entries: list[tuple[int, PromptSkill]]
    """Prompt candidates (eligible for the prompt, model-invocable), home paths compacted."""
    _install: list[Any] = field(default_factory=list)
    _statuses: dict[tuple[bool, bool], list[SkillStatus | None]] = field(default_factory=dict)
    _json: dict[tuple[bool, bool], list[tuple[str, str] | None]] = field(default_factory=dict)
    _bases: dict[bool, tuple[SkillStatus, ...]] = field(default_factory=dict)
    _bases_json: dict[bool, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)

    @classmethod
    def build(
        cls, roots: Sequence[SkillRoot], loads: tuple[RootLoad, ...], gate: Gate, host: Host
    ) -> SharedSkills:
        """Merge the roots' records and gate each once."""
        merged, collisions = merge_records(
            [(root, load.records) for root, load in zip(roots, loads, strict=True)], host.home
        )
        verdicts = [gate.evaluate(record) for record in merged]
        install = [
            install_options(
                r.manifest.install if r.manifest else (),
                r.manifest.os if r.manifest else (),
                host.platform,
                prefer_brew=gate.settings.prefer_brew,
                node_manager=gate.settings.node_manager,
                has_bin=gate.has_bin,
            )
            for r in merged
        ]
        candidates = [
            (i, PromptSkill(r.name, r.description, r.file_path))
            for i, (r, v) in enumerate(zip(merged, verdicts, strict=True))
            if v.prompt_eligible and not r.invocation.disable_model_invocation
        ]
        compacted = compact_home_paths([entry for _, entry in candidates], host.home)
        return cls(
            settings=gate.settings,
            config=gate.config,
            host=host,
            loads=loads,
            records=merged,
            verdicts=verdicts,
            collisions=tuple(collisions),
            bins=tuple(sorted(gate.probed().items())),
            index={r.name: i for i, r in enumerate(merged)},
            prompt_entries=[(i, entry) for (i, _), entry in zip(candidates, compacted, strict=True)],
            _install=install,
        )

    def matches(self, settings: SkillsSettings, config: Mapping[str, Any], host: Host, gate: Gate) -> bool:
        """Whether these verdicts hold for those inputs (same values, same PATH lookups)."""
        return (
            (self.settings is settings or self.settings == settings)
            and (self.config is config or self.config == config)
            and (self.host is host or self.host == host)
            and all(gate.has_bin(name) is found for name, found in self.bins)
        )

    def prompt_candidates(self, allowed: frozenset[str] | None) -> list[PromptSkill]:
        """The prompt entries an agent with this filter may show."""
        if allowed is None:
            return [entry for _, entry in self.prompt_entries]
        return [entry for _, entry in self.prompt_entries if entry.name in allowed]

    def statuses(
        self, allowed: frozenset[str] | None, in_prompt: frozenset[str]
    ) -> tuple[tuple[SkillStatus, ...], SkillsJson]:
        """Every skill's status for one agent, and their JSON fragments (made when first read)."""
        filtered_by_default = allowed is not None
        statuses = self._base(filtered_by_default)
        patched: dict[int, tuple[bool, bool]] = {}
        if allowed is not None:
            for name in allowed:
                i = self.index.get(name)
                if i is not None:
                    patched[i] = (False, name in in_prompt)
        else:
            for name in in_prompt:
                i = self.index.get(name)
                if i is not None:
                    patched[i] = (False, True)

        def fragments() -> tuple[tuple[str, ...], tuple[str, ...]]:
            ascii_base, text_base = self._base_json(filtered_by_default)
            if not patched:
                return ascii_base, text_base
            ascii_list, text_list = list(ascii_base), list(text_base)
            for i, (filtered, prompt) in patched.items():
                ascii_list[i], text_list[i] = self.fragments(i, filtered, prompt)
            return tuple(ascii_list), tuple(text_list)

        if not patched:
            return statuses, SkillsJson(fragments)
        status_list = list(statuses)
        for i, (filtered, prompt) in patched.items():
            status_list[i] = self.status(i, filtered, prompt)
        return tuple(status_list), SkillsJson(fragments)

    def _base(self, filtered: bool) -> tuple[SkillStatus, ...]:
        """Every skill filtered (or every skill unfiltered and out of the prompt)."""
        base = self._bases.get(filtered)
        if base is None:
            base = self._bases[filtered] = tuple(
                self.status(i, filtered, False) for i in range(len(self.records))
            )
        return base

    def _base_json(self, filtered: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The fragments of ``_base``."""
        base = self._bases_json.get(filtered)
        if base is None:
            pairs = [self.fragments(i, filtered, False) for i in range(len(self.records))]
            base = self._bases_json[filtered] = (tuple(a for a, _ in pairs), tuple(t for _, t in pairs))
        return base

    def status(self, i: int, filtered: bool, in_prompt: bool) -> SkillStatus:
        """Skill ``i``'s status when the agent's filter does (not) exclude it."""
        forms = self._statuses.get((filtered, in_prompt))
        if forms is None:  # not setdefault: that would build the list on every call
            forms = self._statuses[(filtered, in_prompt)] = [None] * len(self.records)
        found = forms[i]
        if found is None:
            found = forms[i] = self._make_status(i, filtered, in_prompt)
        return found

    def fragments(self, i: int, filtered: bool, in_prompt: bool) -> tuple[str, str]:
        """Compact, key-sorted JSON of that status: ASCII-escaped, and as text."""
        forms = self._json.get((filtered, in_prompt))
        if forms is None:  # not setdefault: that would build the list on every call
            forms = self._json[(filtered, in_prompt)] = [None] * len(self.records)
        found = forms[i]
        if found is None:
            doc = self.status(i, filtered, in_prompt).to_dict()
            text = compact_dumps(doc, ascii_only=False)
            found = forms[i] = (text if text.isascii() else compact_dumps(doc, ascii_only=True), text)
        return found

    def _make_status(self, i: int, filtered: bool, in_prompt: bool) -> SkillStatus:
        record, verdict = self.records[i], self.verdicts[i]
        manifest = record.manifest
        available = verdict.eligible and not filtered
        user_invocable = record.invocation.user_invocable
        return SkillStatus(
            name=record.name,
            description=record.description,
            skill_key=record.skill_key,
            source=str(record.source),
            tier=str(record.source.tier),
            file_path=record.file_path,
            base_dir=record.base_dir,
            content_hash=record.content_hash,
            emoji=(
                manifest.emoji if manifest and manifest.emoji is not None else record.frontmatter.get("emoji")
            )
            or None,
            homepage=_homepage(record),
            primary_env=manifest.primary_env if manifest else None,
            always=verdict.always,
            disabled=verdict.disabled,
            blocked_by_allowlist=verdict.blocked_by_allowlist,
            blocked_by_agent_filter=filtered,
            eligible=verdict.eligible,
            prompt_eligible=verdict.prompt_eligible,
            model_visible=available and not record.invocation.disable_model_invocation,
            user_invocable=user_invocable,
            command_visible=available and user_invocable,
            in_prompt=in_prompt,
            requirements=verdict.required,
            missing=verdict.missing,
            config_checks=verdict.config_checks,
            install=self._install[i],
            reasons=_reasons(record, verdict, filtered, in_prompt),
        )


def _reasons(record: SkillRecord, verdict: SkillGating, filtered: bool, in_prompt: bool) -> tuple[str, ...]:
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
