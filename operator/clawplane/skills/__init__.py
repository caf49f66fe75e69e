"""clawplane.skills: which skills each agent sees, and the prompt text, exactly as OpenClaw 2026.9.6.

Typical use by the reconcile engine::

    setup = GatewaySkills.from_resources(gateway, agents, skills, state_dir)
    setup.materialize()                      # inline Skill resources -> SKILL.md folders
    engine = SkillsEngine()                  # keep it: it caches scans between passes
    for agent_id in setup.agent_ids():
        inputs, problems = setup.inputs_for(agent_id, Host.current())
        result = engine.evaluate(inputs)     # result.snapshot, result.diagnostics

``SkillsEngine.evaluate`` also takes hand-built ``SkillsInputs`` (roots with
their sources, settings, agent view, host facts), which is how the differential
tests drive it with OpenClaw's own roots.
"""

from clawplane.skills.adapter import DEFAULT_AGENT_ID, INLINE_SKILLS_DIR, GatewaySkills, Placed
from clawplane.skills.engine import SkillsEngine, SkillsEvaluation, resolve_user_path
from clawplane.skills.frontmatter import FrontmatterError, parse_skill_frontmatter
from clawplane.skills.fs.fscache import FsCache
from clawplane.skills.gating import Requirement
from clawplane.skills.inline import render_skill_md
from clawplane.skills.manifest import Invocation, Manifest, parse_manifest
from clawplane.skills.prompt import PromptSkill, escape_xml, format_full, prepare_prompt
from clawplane.skills.snapshot import REASONS, AgentSnapshot, PromptInfo, SkillStatus
from clawplane.skills.types import (
    AgentView,
    EntrySettings,
    Host,
    Limits,
    SkillRoot,
    SkillsInputs,
    SkillsSettings,
    Source,
    Tier,
)

__all__ = [
    "DEFAULT_AGENT_ID",
    "INLINE_SKILLS_DIR",
    "REASONS",
    "AgentSnapshot",
    "AgentView",
    "EntrySettings",
    "FrontmatterError",
    "FsCache",
    "GatewaySkills",
    "Host",
    "Invocation",
    "Limits",
    "Manifest",
    "Placed",
    "PromptInfo",
    "PromptSkill",
    "Requirement",
    "SkillRoot",
    "SkillStatus",
    "SkillsEngine",
    "SkillsEvaluation",
    "SkillsInputs",
    "SkillsSettings",
    "Source",
    "Tier",
    "escape_xml",
    "format_full",
    "parse_manifest",
    "parse_skill_frontmatter",
    "prepare_prompt",
    "render_skill_md",
    "resolve_user_path",
]
