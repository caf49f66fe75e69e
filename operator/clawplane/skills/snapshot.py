"""Per-agent skill snapshots: every discovered skill with its verdict, and the prompt text.

A snapshot is a frozen value. ``to_dict()`` gives its JSON form (camelCase keys,
modelled on OpenClaw's ``skills list/check --json``) and ``content_hash`` is the
SHA-256 of that form without the hash itself (computed when first read), so equal inputs give equal hashes
and any change in a skill file, a verdict or the prompt changes it.

Exclusion reasons, in the order they apply:

``disabled``                 ``skills.entries.<key>.enabled: false``
``blocked-by-allowlist``     a bundled skill not in ``allowBundled``
``platform-incompatible``    ``os`` does not list this platform
``missing-requirements``     ``requires.*`` not met (see ``missing``)
``agent-filter``             not in the agent's ``skills`` list
``disable-model-invocation`` eligible but kept out of the prompt by the skill
``not-user-invocable``       hidden from slash commands (``user-invocable: false``)
``prompt-platform-mismatch`` eligible, yet OpenClaw's prompt path compares ``os`` exactly
``prompt-budget``            cut by ``maxSkillsInPrompt``/``maxSkillsPromptChars``
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clawplane._utils.compactjson import compact
from clawplane._utils.fastinit import fast_init
from clawplane.skills.gating import Requirement
from clawplane.skills.installoptions import InstallOption

__all__ = [
    "REASONS",
    "AgentSnapshot",
    "PromptInfo",
    "SkillStatus",
    "SkillsJson",
    "compact_dumps",
]

SNAPSHOT_FORMAT_VERSION = 1
REASONS = (
    "disabled",
    "blocked-by-allowlist",
    "platform-incompatible",
    "missing-requirements",
    "agent-filter",
    "disable-model-invocation",
    "not-user-invocable",
    "prompt-platform-mismatch",
    "prompt-budget",
)


@fast_init
@dataclass(frozen=True, slots=True)
class SkillStatus:
    """One discovered skill (after precedence) and what this agent may do with it."""

    name: str
    description: str
    skill_key: str
    source: str
    tier: str
    file_path: str
    base_dir: str
    content_hash: str
    emoji: str | None
    homepage: str | None
    primary_env: str | None
    always: bool
    disabled: bool
    blocked_by_allowlist: bool
    blocked_by_agent_filter: bool
    eligible: bool
    prompt_eligible: bool
    model_visible: bool
    user_invocable: bool
    command_visible: bool
    in_prompt: bool
    requirements: Requirement
    missing: Requirement
    config_checks: tuple[tuple[str, bool], ...]
    install: tuple[InstallOption, ...]
    reasons: tuple[str, ...]

    @property
    def bundled(self) -> bool:
        """Bundled or custodian skill."""
        return self.source in ("openclaw-bundled", "openclaw-custodian")

    @property
    def platform_incompatible(self) -> bool:
        """``os`` excludes this platform."""
        return bool(self.missing.os)

    def to_dict(self) -> dict[str, Any]:
        """JSON form with OpenClaw's key names where OpenClaw has them."""
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "skillKey": self.skill_key,
            "source": self.source,
            "tier": self.tier,
            "bundled": self.bundled,
            "filePath": self.file_path,
            "baseDir": self.base_dir,
            "contentHash": self.content_hash,
            "emoji": self.emoji,
            "homepage": self.homepage,
            "primaryEnv": self.primary_env,
            "always": self.always,
            "disabled": self.disabled,
            "blockedByAllowlist": self.blocked_by_allowlist,
            "blockedByAgentFilter": self.blocked_by_agent_filter,
            "eligible": self.eligible,
            "promptEligible": self.prompt_eligible,
            "platformIncompatible": self.platform_incompatible,
            "modelVisible": self.model_visible,
            "userInvocable": self.user_invocable,
            "commandVisible": self.command_visible,
            "inPrompt": self.in_prompt,
            "requirements": self.requirements.to_dict(),
            "missing": self.missing.to_dict(),
            "configChecks": [{"path": p, "satisfied": ok} for p, ok in self.config_checks],
            "install": [option.to_dict() for option in self.install],
            "reasons": list(self.reasons),
        }
        return data


@dataclass(frozen=True, slots=True)
class PromptInfo:
    """The catalog text and how it was fitted to the budget."""

    text: str
    chars: int
    """Length in UTF-16 code units, as OpenClaw counts."""
    skills: tuple[str, ...]
    format: str
    truncated: bool
    description_max_chars: int | None
    max_skills: int
    max_chars: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "text": self.text,
            "chars": self.chars,
            "skills": list(self.skills),
            "format": self.format,
            "truncated": self.truncated,
            "descriptionMaxChars": self.description_max_chars,
            "maxSkills": self.max_skills,
            "maxChars": self.max_chars,
        }


class SkillsJson:
    """Each status's compact, key-sorted JSON, made on first use (see ``clawplane.skills.shared``).

    ``ascii`` is escaped as ``json.dumps`` does by default (the snapshot file), ``text`` is not
    (the content hash); both equal ``json.dumps(status.to_dict(), sort_keys=True, ...)``.
    """

    __slots__ = ("_made", "_make")

    def __init__(self, make: Callable[[], tuple[tuple[str, ...], tuple[str, ...]]]) -> None:
        self._make = make
        self._made: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    def _both(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if self._made is None:
            self._made = self._make()
        return self._made

    @property
    def ascii(self) -> tuple[str, ...]:
        """Fragments as the snapshot file writes them."""
        return self._both()[0]

    @property
    def text(self) -> tuple[str, ...]:
        """Fragments as the content hash reads them."""
        return self._both()[1]


@dataclass(frozen=True, slots=True)
class AgentSnapshot:
    """One agent's skills: statuses sorted by name, and the prompt."""

    agent_id: str
    workspace_dir: str | None
    managed_skills_dir: str | None
    platform: str
    skill_filter: tuple[str, ...] | None
    skills: tuple[SkillStatus, ...]
    prompt: PromptInfo
    format_version: int = SNAPSHOT_FORMAT_VERSION
    skills_json: SkillsJson | None = field(default=None, compare=False, repr=False)
    """The statuses' JSON when the engine built it with them: serializing then only joins."""
    _hash: list[str] = field(default_factory=list, compare=False, repr=False)

    @property
    def content_hash(self) -> str:
        """SHA-256 of the body, computed when first asked for (a listing may never ask)."""
        if not self._hash:
            if self.skills_json is None:
                self._hash.append(hash_body(self.body()))
            else:
                self._hash.append(_sha256(self._compact(ascii_only=False, with_hash=False)))
        return self._hash[0]

    def body(self) -> dict[str, Any]:
        """The JSON form without ``contentHash``."""
        return {**self.body_without_skills(), "skills": [s.to_dict() for s in self.skills]}

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, ``contentHash`` included."""
        return {**self.body(), "contentHash": self.content_hash}

    def to_json(self) -> str:
        """Stable JSON text (sorted keys)."""
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, indent=2)

    def sealed(self) -> AgentSnapshot:
        """This snapshot, its ``content_hash`` fixed (it is computed on first use)."""
        return self

    def compact_json(self) -> str:
        """``json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))``, made cheaply."""
        if self.skills_json is None:
            return compact_dumps(self.to_dict(), ascii_only=True)
        return self._compact(ascii_only=True, with_hash=True)

    def _compact(self, *, ascii_only: bool, with_hash: bool) -> str:
        # Compact, key-sorted JSON of a dict is '{' + ','.join('"key":value' in key order) + '}',
        # so the skills list can be spliced in from fragments byte for byte.
        assert self.skills_json is not None
        fragments = self.skills_json.ascii if ascii_only else self.skills_json.text
        doc: dict[str, Any] = {**self.body_without_skills(), "skills": None}
        if with_hash:
            doc["contentHash"] = self.content_hash
        parts = []
        for key in sorted(doc):
            value = (
                "[" + ",".join(fragments) + "]" if key == "skills" else compact_dumps(doc[key], ascii_only)
            )
            parts.append(compact_dumps(key, ascii_only) + ":" + value)
        return "{" + ",".join(parts) + "}"

    def body_without_skills(self) -> dict[str, Any]:
        """The JSON form without ``contentHash`` and ``skills``."""
        return {
            "formatVersion": self.format_version,
            "agentId": self.agent_id,
            "workspaceDir": self.workspace_dir,
            "managedSkillsDir": self.managed_skills_dir,
            "platform": self.platform,
            "skillFilter": list(self.skill_filter) if self.skill_filter is not None else None,
            "prompt": self.prompt.to_dict(),
        }

    def status(self, name: str) -> SkillStatus | None:
        """The status of the skill called ``name``."""
        return next((s for s in self.skills if s.name == name), None)

    @property
    def eligible(self) -> tuple[str, ...]:
        """Names of eligible skills (the listing's view)."""
        return tuple(s.name for s in self.skills if s.eligible)

    @property
    def model_visible(self) -> tuple[str, ...]:
        """Names the model is allowed to see."""
        return tuple(s.name for s in self.skills if s.model_visible)

    @property
    def command_visible(self) -> tuple[str, ...]:
        """Names usable as slash commands."""
        return tuple(s.name for s in self.skills if s.command_visible)


def compact_dumps(value: Any, ascii_only: bool) -> str:
    """Compact, key-sorted JSON (the form snapshots are hashed and written in)."""
    return compact(value, sort_keys=True, ascii_only=ascii_only)


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def hash_body(body: dict[str, Any]) -> str:
    """SHA-256 of canonical JSON."""
    return _sha256(compact_dumps(body, ascii_only=False))
