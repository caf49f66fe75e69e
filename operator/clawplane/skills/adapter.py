"""From ``Gateway``, ``Agent`` and ``Skill`` resources to the engine's inputs.

Roots, in OpenClaw's precedence order (lowest first):

==========================  =========================================  ==========================
``load.extraDirs``          each folder                                ``openclaw-extra``
``roots.plugins``           each folder                                ``openclaw-extra``
``roots.bundled``           the folder                                 ``openclaw-bundled``
workshop (see below)        one folder per agent                       ``openclaw-workshop``
``roots.managed``           the folder                                 ``openclaw-managed``
inline ``Skill`` resources  ``<state>/inline-skills``                  ``openclaw-managed``
``roots.personal``          the folder                                 ``agents-skills-personal``
agent workspace             ``<ws>/.agents/skills`` then ``<ws>/skills``  project / workspace
==========================  =========================================  ==========================

Relative paths are relative to the folder of the resource file that holds
them; ``~`` is the host's home. An agent's workspace follows OpenClaw: its own
``workspace``, else the Gateway's ``agents.defaults.workspace`` itself when it is
the only agent (or there is none and it is the implicit ``main``), else
``<defaults.workspace>/<agentId>``; with neither, OpenClaw's defaults under the
Gateway's ``agents.stateDir`` (``<stateDir>/workspace`` for that sole agent,
``<stateDir>/workspace-<agentId>`` otherwise), and without a state dir there are no
workspace roots.

An agent's workshop tier follows OpenClaw's ``resolveWorkshopSkillsDir``:
``<agentDir>/workshop-skills`` for the Agent's own ``agentDir``; else
``<roots.workshop>/<agentId>`` (clawplane's shortcut); else OpenClaw's default agent dir
``<agents.stateDir>/agents/<agentId>/agent``, so ``…/agent/workshop-skills``; with none of
them there is no workshop tier.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from clawplane.diagnostics import Diagnostic
from clawplane.jscompat import js_trim
from clawplane.models import Agent, Gateway, GatewaySpec, Skill, SkillEntry, ValueFrom, literal_text
from clawplane.secrets import SecretError, resolve_value
from clawplane.skills import codes
from clawplane.skills.inline import materialize_inline_skills
from clawplane.skills.types import (
    AgentView,
    EntrySettings,
    Host,
    Limits,
    SkillRoot,
    SkillsInputs,
    SkillsSettings,
    Source,
)

__all__ = ["DEFAULT_AGENT_ID", "INLINE_SKILLS_DIR", "GatewaySkills", "Placed", "normalize_agent_id"]

DEFAULT_AGENT_ID = "main"
INLINE_SKILLS_DIR = "inline-skills"
WORKSHOP_DIR = "workshop-skills"
"""The workshop tier's folder inside an OpenClaw agent dir."""
R = TypeVar("R")
_VALID_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$", re.IGNORECASE)
_INVALID_ID_CHARS = re.compile(r"[^a-z0-9_-]+")


def normalize_agent_id(value: str) -> str:
    """OpenClaw's ``normalizeAgentId``: lower-case, invalid runs to ``-``, at most 64, else ``main``."""
    trimmed = js_trim(value)
    lowered = trimmed.lower()
    if _VALID_ID.match(trimmed):
        return lowered
    cleaned = _INVALID_ID_CHARS.sub("-", lowered).strip("-")[:64]
    return cleaned or DEFAULT_AGENT_ID


@dataclass(frozen=True, slots=True)
class Placed(Generic[R]):
    """A resource and the folder its relative paths are relative to."""

    resource: R
    base_dir: Path


@dataclass(frozen=True)
class GatewaySkills:
    """The skill-related resources of one folder or namespace, ready to build agent inputs."""

    gateway: Placed[Gateway] | None
    agents: tuple[Placed[Agent], ...]
    skills: tuple[Placed[Skill], ...]
    state_dir: Path
    """Where clawplane keeps its own files (inline skills go to ``<state_dir>/inline-skills``)."""
    _by_id: Mapping[str, Placed[Agent]] = field(init=False, repr=False)
    _memo: dict[Any, Any] = field(init=False, repr=False, compare=False, default_factory=dict)
    """Settings and config view (the same for every agent) and each agent's inputs, per host."""

    def __post_init__(self) -> None:
        by_id = {normalize_agent_id(p.resource.metadata.name): p for p in self.agents}
        object.__setattr__(self, "_by_id", MappingProxyType(by_id))

    @classmethod
    def from_resources(
        cls,
        gateway: Placed[Gateway] | None,
        agents: Sequence[Placed[Agent]],
        skills: Sequence[Placed[Skill]],
        state_dir: Path,
    ) -> GatewaySkills:
        """Collect the resources (the Gateway may be absent: OpenClaw's defaults apply)."""
        return cls(gateway, tuple(agents), tuple(skills), state_dir)

    @property
    def spec(self) -> GatewaySpec:
        """The Gateway spec, or the defaults."""
        return self.gateway.resource.spec if self.gateway else GatewaySpec()

    @property
    def gateway_dir(self) -> Path:
        """Folder the Gateway's relative paths are relative to."""
        return self.gateway.base_dir if self.gateway else self.state_dir.parent

    @property
    def inline_dir(self) -> Path:
        """Where inline Skill resources are written."""
        return self.state_dir / INLINE_SKILLS_DIR

    def agent_ids(self) -> list[str]:
        """Declared agent ids (lower-cased as OpenClaw normalizes them), or ``["main"]``."""
        return sorted(self._by_id) or [DEFAULT_AGENT_ID]

    def default_agent_id(self) -> str | None:
        """The agent a command means when none is named: the only one, or ``main`` when none."""
        ids = self.agent_ids()
        return ids[0] if len(ids) == 1 else None

    def materialize(self) -> list[Diagnostic]:
        """Write inline Skill resources as SKILL.md folders (only when their text changed)."""
        return materialize_inline_skills((p.resource for p in self.skills), self.inline_dir)

    def adopt(self, previous: GatewaySkills) -> None:
        """Reuse what ``previous`` worked out for resources that are the same objects here.

        Settings and config depend on the Gateway alone; an agent's inputs on the Gateway,
        its own resource, how many agents there are (the shared workspace) and inline skills.
        """

        def same(a: Placed[Any] | None, b: Placed[Any] | None) -> bool:
            if a is None or b is None:
                return a is b
            return a.resource is b.resource and a.base_dir == b.base_dir

        if not same(self.gateway, previous.gateway) or self.state_dir != previous.state_dir:
            return
        for key in ("settings", "config"):
            if key in previous._memo:
                self._memo[key] = previous._memo[key]
        if len(self.agents) != len(previous.agents) or bool(self.skills) != bool(previous.skills):
            return
        for agent_id, placed in self._by_id.items():
            known = previous._memo.get(("inputs", agent_id))
            if known is not None and same(placed, previous._by_id.get(agent_id)):
                self._memo[("inputs", agent_id)] = known

    def inputs_for(self, agent_id: str, host: Host) -> tuple[SkillsInputs, list[Diagnostic]]:
        """The engine inputs for one agent, and problems found resolving secrets."""
        known = self._memo.get(("inputs", agent_id))
        if known is None or known[0] is not host:
            known = self._memo[("inputs", agent_id)] = (host, *self._inputs_for(agent_id, host))
        return known[1], list(known[2])

    def _inputs_for(self, agent_id: str, host: Host) -> tuple[SkillsInputs, list[Diagnostic]]:
        agent_key = normalize_agent_id(agent_id)
        placed = self._by_id.get(agent_key)
        workspace = self._workspace(agent_key, placed)
        settings, diags = self._shared_settings(host)
        spec = placed.resource.spec if placed else None
        limits = spec.skills_limits if spec else None
        skill_filter = spec.skills if spec and spec.skills is not None else self.spec.agents.defaults.skills
        view = AgentView(
            agent_id=agent_key,
            skill_filter=tuple(skill_filter) if skill_filter is not None else None,
            max_prompt_chars=limits.max_skills_prompt_chars if limits else None,
            workspace_dir=workspace,
        )
        roots = self.roots(agent_key, workspace, self._workshop(agent_key, placed))
        managed = self.spec.skills.roots.managed
        inputs = SkillsInputs(
            roots=roots,
            settings=settings,
            agent=view,
            host=host,
            config=self._shared_config(),
            managed_dir=self._path(managed, self.gateway_dir) if managed else None,
        )
        return inputs, diags

    # -- roots -----------------------------------------------------------------------------
    def roots(
        self, agent_id: str, workspace: str | None, workshop: str | None = None
    ) -> tuple[SkillRoot, ...]:
        """Every root for ``agent_id`` in precedence order (``workshop``: the agent's workshop folder)."""
        spec, base = self.spec.skills, self.gateway_dir
        roots = [SkillRoot(self._path(d, base), Source.EXTRA) for d in spec.load.extra_dirs]
        roots += [SkillRoot(self._path(d, base), Source.EXTRA) for d in spec.roots.plugins]
        if spec.roots.bundled:
            roots.append(SkillRoot(self._path(spec.roots.bundled, base), Source.BUNDLED))
        if workshop is None and spec.roots.workshop:
            workshop = os.path.join(self._path(spec.roots.workshop, base), agent_id)
        if workshop:
            roots.append(SkillRoot(workshop, Source.WORKSHOP))
        if spec.roots.managed:
            roots.append(SkillRoot(self._path(spec.roots.managed, base), Source.MANAGED))
        if self.skills:
            roots.append(SkillRoot(str(self.inline_dir), Source.MANAGED))
        if spec.roots.personal:
            roots.append(SkillRoot(self._path(spec.roots.personal, base), Source.PERSONAL))
        if workspace:
            roots.append(SkillRoot(os.path.join(workspace, ".agents", "skills"), Source.PROJECT))
            roots.append(SkillRoot(os.path.join(workspace, "skills"), Source.WORKSPACE))
        return tuple(roots)

    def _workspace(self, agent_id: str, placed: Placed[Agent] | None) -> str | None:
        own = placed.resource.spec.workspace if placed else None
        if own and js_trim(own):
            return self._path(js_trim(own), placed.base_dir if placed else self.gateway_dir)
        sole_owner = (len(self.agents) == 1 and placed is not None) or (
            not self.agents and agent_id == DEFAULT_AGENT_ID
        )
        fallback = self.spec.agents.defaults.workspace
        if fallback:
            shared = self._path(fallback, self.gateway_dir)
            return shared if sole_owner else os.path.join(shared, agent_id)
        state = self._state_dir()
        if state is None:
            return None
        return os.path.join(state, "workspace" if sole_owner else f"workspace-{agent_id}")

    def _workshop(self, agent_id: str, placed: Placed[Agent] | None) -> str | None:
        own = placed.resource.spec.agent_dir if placed else None
        if own and js_trim(own):
            agent_dir = self._path(js_trim(own), placed.base_dir if placed else self.gateway_dir)
            return os.path.join(agent_dir, WORKSHOP_DIR)
        if self.spec.skills.roots.workshop:
            return None  # roots() places <workshop>/<agentId>
        state = self._state_dir()
        return os.path.join(state, "agents", agent_id, "agent", WORKSHOP_DIR) if state else None

    def _state_dir(self) -> str | None:
        state = self.spec.agents.state_dir
        return self._path(state, self.gateway_dir) if state and js_trim(state) else None

    @staticmethod
    def _path(path: str, base: Path) -> str:
        text = js_trim(path)
        if text == "~" or text.startswith("~/") or os.path.isabs(text):
            return text  # the engine expands ~ against the host's home
        return os.path.normpath(os.path.join(base, text))

    # -- settings and config ---------------------------------------------------------------
    def _shared_settings(self, host: Host) -> tuple[SkillsSettings, list[Diagnostic]]:
        known = self._memo.get("settings")
        if known is None or known[0] is not host:
            known = self._memo["settings"] = (host, *self._settings(host))
        return known[1], list(known[2])

    def _shared_config(self) -> Mapping[str, Any]:
        if "config" not in self._memo:
            self._memo["config"] = MappingProxyType(self.config_view())
        config: Mapping[str, Any] = self._memo["config"]
        return config

    def _settings(self, host: Host) -> tuple[SkillsSettings, list[Diagnostic]]:
        skills = self.spec.skills
        diags: list[Diagnostic] = []
        entries = {key: self._entry(key, entry, host, diags) for key, entry in skills.entries.items()}
        install = _mapping(_mapping(self._shared_config().get("skills")).get("install"))
        manager = js_trim(str(install.get("nodeManager") or "")).lower()
        settings = SkillsSettings(
            allow_bundled=tuple(skills.allow_bundled) if skills.allow_bundled is not None else None,
            entries=MappingProxyType(entries),
            allow_symlink_targets=tuple(
                self._path(t, self.gateway_dir) for t in skills.load.allow_symlink_targets
            ),
            limits=Limits(
                max_candidates_per_root=skills.limits.max_candidates_per_root,
                max_skills_loaded_per_source=skills.limits.max_skills_loaded_per_source,
                max_skills_in_prompt=skills.limits.max_skills_in_prompt,
                max_skills_prompt_chars=skills.limits.max_skills_prompt_chars,
                max_skill_file_bytes=skills.limits.max_skill_file_bytes,
            ),
            prefer_brew=install.get("preferBrew") is not False,
            node_manager=manager if manager in ("npm", "pnpm", "yarn", "bun") else "npm",
        )
        return settings, diags

    def _entry(self, key: str, entry: SkillEntry, host: Host, diags: list[Diagnostic]) -> EntrySettings:
        env: dict[str, str] = {}
        for name, value in entry.env.items():
            try:
                env[name] = resolve_value(value, base_dir=self.gateway_dir, environ=host.env)
            except SecretError as exc:
                diags.append(
                    codes.skill_diagnostic(
                        codes.SECRET_UNRESOLVED,
                        f"skills.entries.{key}.env.{name}: {exc}",
                        None,
                        resource=self.gateway.resource.key if self.gateway else "",
                    )
                )
        api_key = entry.api_key
        configured = isinstance(api_key, ValueFrom) or (
            api_key is not None and bool(js_trim(literal_text(api_key)))
        )
        return EntrySettings(enabled=entry.enabled, env=MappingProxyType(env), api_key_configured=configured)

    def config_view(self) -> Mapping[str, Any]:
        """OpenClaw-shaped config for ``requires.config``: ``config`` overlaid with typed settings."""
        return self.spec.openclaw_view()


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
