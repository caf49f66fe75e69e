"""Value types of the skills engine: roots, settings, agent views, host facts and loaded skills.

These are the engine's inputs and intermediate records. They know nothing of
resource files; ``clawplane.skills.adapter`` builds them from ``Gateway``,
``Agent`` and ``Skill`` resources.
"""

from __future__ import annotations

import enum
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from clawplane._utils.fastinit import fast_init
from clawplane.skills.manifest import Invocation, Manifest

__all__ = [
    "TIER_ORDER",
    "AgentView",
    "EntrySettings",
    "Host",
    "Limits",
    "SkillRecord",
    "SkillRoot",
    "SkillsInputs",
    "SkillsSettings",
    "Source",
    "Tier",
]


class Source(enum.StrEnum):
    """OpenClaw's ``source`` label of a skill root (also shown by ``skills list``)."""

    EXTRA = "openclaw-extra"
    BUNDLED = "openclaw-bundled"
    CUSTODIAN = "openclaw-custodian"
    WORKSHOP = "openclaw-workshop"
    MANAGED = "openclaw-managed"
    PERSONAL = "agents-skills-personal"
    PROJECT = "agents-skills-project"
    WORKSPACE = "openclaw-workspace"

    @property
    def tier(self) -> Tier:
        """The precedence tier this source belongs to."""
        return _TIER_OF[self]

    @property
    def bundled(self) -> bool:
        """Bundled and custodian skills: ``allowBundled`` applies, hardlinks are tolerated."""
        return self in (Source.BUNDLED, Source.CUSTODIAN)

    @property
    def contained(self) -> bool:
        """Whether a skill's real path must stay inside its root (all but managed and personal)."""
        return self not in (Source.MANAGED, Source.PERSONAL)

    @property
    def honours_symlink_targets(self) -> bool:
        """Whether ``load.allowSymlinkTargets`` may admit an escaping skill from this source."""
        return self in (Source.WORKSPACE, Source.EXTRA, Source.PROJECT)


class Tier(enum.StrEnum):
    """Precedence tiers, lowest first; a later tier wins on the same skill name."""

    EXTRA = "extra"
    BUNDLED = "bundled"
    WORKSHOP = "workshop"
    MANAGED = "managed"
    PERSONAL = "personal"
    WORKSPACE = "workspace"


TIER_ORDER: tuple[Tier, ...] = tuple(Tier)

_TIER_OF = {
    Source.EXTRA: Tier.EXTRA,
    Source.BUNDLED: Tier.BUNDLED,
    Source.CUSTODIAN: Tier.BUNDLED,
    Source.WORKSHOP: Tier.WORKSHOP,
    Source.MANAGED: Tier.MANAGED,
    Source.PERSONAL: Tier.PERSONAL,
    Source.PROJECT: Tier.WORKSPACE,
    Source.WORKSPACE: Tier.WORKSPACE,
}


@dataclass(frozen=True, slots=True)
class SkillRoot:
    """One folder scanned for skills, with the source it loads as."""

    dir: str
    source: Source

    @property
    def tier(self) -> Tier:
        """The root's precedence tier."""
        return self.source.tier


@dataclass(frozen=True, slots=True)
class Limits:
    """``skills.limits`` with OpenClaw's defaults."""

    max_candidates_per_root: int = 300
    max_skills_loaded_per_source: int = 200
    max_skills_in_prompt: int = 150
    max_skills_prompt_chars: int = 18000
    max_skill_file_bytes: int = 256000


@dataclass(frozen=True, slots=True)
class EntrySettings:
    """``skills.entries.<skillKey>``: the parts gating reads (env values already resolved)."""

    enabled: bool | None = None
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    api_key_configured: bool = False


@dataclass(frozen=True, slots=True)
class SkillsSettings:
    """Gateway-wide skill settings."""

    allow_bundled: tuple[str, ...] | None = None
    entries: Mapping[str, EntrySettings] = field(default_factory=lambda: MappingProxyType({}))
    allow_symlink_targets: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    prefer_brew: bool = True
    node_manager: str = "npm"


@dataclass(frozen=True, slots=True)
class AgentView:
    """One agent as the skills engine sees it."""

    agent_id: str
    skill_filter: tuple[str, ...] | None = None
    """Allowed skill names: ``None`` = unrestricted, ``()`` = none."""
    max_prompt_chars: int | None = None
    workspace_dir: str | None = None


@dataclass(frozen=True, slots=True)
class Host:
    """Facts of the machine that gating reads: environment, PATH, platform, home and cwd."""

    env: Mapping[str, str]
    path: str
    platform: str
    home: str | None
    cwd: str

    @classmethod
    def current(cls) -> Host:
        """This process's environment, PATH, platform, home and working directory."""
        env = dict(os.environ)
        home = env.get("HOME") or os.path.expanduser("~")
        return cls(
            env=MappingProxyType(env),
            path=env.get("PATH", ""),
            platform=sys.platform,
            home=os.path.abspath(home) if home else None,
            cwd=os.getcwd(),
        )


@dataclass(frozen=True, slots=True)
class SkillsInputs:
    """Everything the engine needs to build one agent's snapshot."""

    roots: tuple[SkillRoot, ...]
    settings: SkillsSettings
    agent: AgentView
    host: Host
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """OpenClaw-shaped config that ``requires.config`` dot paths are read from."""
    managed_dir: str | None = None
    """Shown as ``managedSkillsDir`` in listings."""


@fast_init
@dataclass(frozen=True, slots=True)
class SkillRecord:
    """A skill loaded from a SKILL.md that passed discovery, containment and parsing."""

    name: str
    description: str
    file_path: str
    base_dir: str
    source: Source
    frontmatter: Mapping[str, str]
    manifest: Manifest | None
    invocation: Invocation
    skill_key: str
    content_hash: str
    real_file_path: str
