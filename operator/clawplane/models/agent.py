"""Agent: one agent with its skills allowlist and MCP servers (``agents.entries.<id>``)."""

from __future__ import annotations

import enum
from typing import Annotated, ClassVar, Literal

from pydantic import Field, StringConstraints

from clawplane.models.base import NonEmptyStr, Resource
from clawplane.models.openparts import OpenPart

SkillName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class ToolProfile(enum.StrEnum):
    """OpenClaw's built-in tool profiles."""

    MINIMAL = "minimal"
    CODING = "coding"
    MESSAGING = "messaging"
    FULL = "full"


class ToolPolicy(OpenPart):
    """Tool policy (OpenClaw ``tools``): allow/deny lists of names, ``group:*`` and ``*`` globs, and
    every other key OpenClaw's ``tools`` takes at this place (``exec``, ``fs``, ``elevated``, …)."""

    OPENCLAW_ALIGNED: ClassVar[bool] = True

    profile: ToolProfile | None = None
    """Base tool profile."""
    allow: list[NonEmptyStr] | None = None
    """Absolute allowlist that replaces the profile's defaults."""
    also_allow: list[NonEmptyStr] | None = None
    """Tools added on top of the profile."""
    deny: list[NonEmptyStr] | None = None
    """Tools never allowed; wins over allow."""


class SkillsLimits(OpenPart):
    """Per-agent prompt budget."""

    OPENCLAW_ALIGNED: ClassVar[bool] = True

    max_skills_prompt_chars: Annotated[int, Field(ge=0)] | None = None
    """Most characters (UTF-16 units) of the skills catalog in this agent's prompt."""


class ModelChoice(OpenPart):
    """A primary model with fallbacks."""

    OPENCLAW_ALIGNED: ClassVar[bool] = True

    primary: NonEmptyStr | None = None
    """Model used first, e.g. ``anthropic/claude-sonnet-4`` (absent: OpenClaw's default)."""
    fallbacks: list[NonEmptyStr] = Field(default_factory=list)
    """Models tried in order when the primary fails."""


class AgentSpec(OpenPart):
    """Desired configuration of one agent: clawplane's fields and every key of OpenClaw's
    ``agents.entries.<id>`` (``identity``, ``sandbox``, ``heartbeat``, ``subagents``, …)."""

    OWN: ClassVar[frozenset[str]] = frozenset({"mcpServers"})
    OPENCLAW_ALIGNED: ClassVar[bool] = True

    description: str | None = None
    """What the agent is for."""
    skills: list[SkillName] | None = None
    """Skill names this agent may use: absent = inherit the Gateway default, ``[]`` = none, a list replaces."""
    skills_limits: SkillsLimits | None = None
    """Prompt budget overrides."""
    workspace: str | None = None
    """Workspace folder (its ``skills/`` and ``.agents/skills`` are skill roots); relative to the resource file."""
    agent_dir: str | None = None
    """OpenClaw's agent dir; its ``workshop-skills/`` is this agent's workshop tier. Default: ``<agents.stateDir>/agents/<id>/agent``."""
    model: NonEmptyStr | ModelChoice | None = None
    """Model id, or ``{primary, fallbacks}``."""
    mcp_servers: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]] | None = None
    """McpServer names this agent uses; absent = every enabled server."""
    tools: ToolPolicy | None = None
    """Tool policy for this agent."""


class Agent(Resource):
    """An agent; ``metadata.name`` is its id."""

    KIND: ClassVar[str] = "Agent"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("agt",)
    PLURAL: ClassVar[str] = "agents"

    kind: Literal["Agent"]
    spec: AgentSpec = Field(default_factory=AgentSpec)
    """Desired configuration."""
