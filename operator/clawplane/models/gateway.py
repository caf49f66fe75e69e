"""Gateway: folder-wide settings, and every top-level section of OpenClaw's config.

The Gateway stands for openclaw.json itself: besides clawplane's own fields it takes, by
OpenClaw's names, every section OpenClaw allows at the top (``gateway``, ``hooks``,
``logging``, ``diagnostics``, ``browser``, …), except the parts other resources declare
(``mcp.servers``, ``agents.entries``, ``channels.<type>``, ``models.providers``).
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints

from clawplane.models.agent import ModelChoice, SkillName, ToolPolicy
from clawplane.models.base import Model, NonEmptyStr, Resource
from clawplane.models.observability import Observability
from clawplane.models.openparts import OpenPart, OpenValue, deep_merged, openclaw_view
from clawplane.models.session import ModelsConfig, SessionConfig
from clawplane.models.values import SecretValue

Path_ = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class SkillRoots(Model):
    """Folders of the fixed skill tiers; relative paths are relative to the resource file."""

    bundled: Path_ | None = None
    """Bundled tier (OpenClaw's package ``skills/``)."""
    plugins: list[Path_] = Field(default_factory=list)
    """Plugin skill folders (loaded at the extra tier, after ``load.extraDirs``)."""
    workshop: Path_ | None = None
    """Workshop tier: a folder holding ``<agentId>/`` skill folders (an Agent's own ``agentDir`` wins)."""
    managed: Path_ | None = None
    """Managed tier (OpenClaw's ``~/.openclaw/skills``); inline Skill resources join it."""
    personal: Path_ | None = None
    """Personal tier (OpenClaw's ``~/.agents/skills``)."""


class SkillsLoad(OpenPart):
    """Extra skill folders and symlink policy."""

    extra_dirs: list[Path_] = Field(default_factory=list)
    """Extra skill folders, the lowest tier."""
    allow_symlink_targets: list[Path_] = Field(default_factory=list)
    """Folders that symlinked skills may point into (workspace, project and extra tiers only)."""
    watch: bool | None = None
    """Watch skill folders for changes."""


class SkillEntry(OpenPart):
    """Per-skill settings keyed by skill key."""

    enabled: bool | None = None
    """``false`` disables the skill everywhere."""
    api_key: SecretValue | None = None
    """Value for the skill's ``primaryEnv``."""
    env: dict[str, SecretValue] = Field(default_factory=dict)
    """Environment the skill needs."""
    config: dict[str, OpenValue] = Field(default_factory=dict)
    """Free-form skill configuration (values may be ``valueFrom`` references)."""


class SkillsLimitsConfig(OpenPart):
    """Discovery and prompt limits (OpenClaw ``skills.limits``)."""

    max_candidates_per_root: Annotated[int, Field(gt=0)] = 300
    """Most candidate folders examined per root."""
    max_skills_loaded_per_source: Annotated[int, Field(gt=0)] = 200
    """Most skills loaded from one source."""
    max_skills_in_prompt: Annotated[int, Field(ge=0)] = 150
    """Most skills listed in a prompt."""
    max_skills_prompt_chars: Annotated[int, Field(ge=0)] = 18000
    """Most characters (UTF-16 units) of the skills catalog."""
    max_skill_file_bytes: Annotated[int, Field(ge=0)] = 256000
    """Largest SKILL.md read."""


class SkillsConfig(OpenPart):
    """Skill discovery and gating (OpenClaw ``skills``)."""

    OWN: ClassVar[frozenset[str]] = frozenset({"roots"})

    roots: SkillRoots = Field(default_factory=SkillRoots)
    """Folders of the fixed tiers."""
    load: SkillsLoad = Field(default_factory=SkillsLoad)
    """Extra folders and symlink policy."""
    allow_bundled: list[NonEmptyStr] | None = None
    """Bundled skills allowed (by key or name); empty or absent = all."""
    entries: dict[str, SkillEntry] = Field(default_factory=dict)
    """Per-skill settings keyed by skill key."""
    limits: SkillsLimitsConfig = Field(default_factory=SkillsLimitsConfig)
    """Discovery and prompt limits."""


class AgentDefaults(OpenPart):
    """Defaults every Agent inherits (OpenClaw ``agents.defaults``: also ``sandbox``, ``heartbeat``, …)."""

    skills: list[SkillName] | None = None
    """Skills allowlist for agents without their own; absent = unrestricted."""
    workspace: Path_ | None = None
    """Default workspace folder; each agent uses ``<workspace>/<agentId>`` unless it sets its own."""
    model: NonEmptyStr | ModelChoice | None = None
    """Default model id, or ``{primary, fallbacks}``."""


class AgentsConfig(OpenPart):
    """Agent defaults (OpenClaw ``agents``; its ``entries`` are the Agent resources)."""

    OWN: ClassVar[frozenset[str]] = frozenset({"defaultAgent", "stateDir"})

    defaults: AgentDefaults = Field(default_factory=AgentDefaults)
    """Defaults every Agent inherits."""
    default_agent: NonEmptyStr | None = None
    """Agent that answers channels without an explicit binding (default: ``main`` or the only agent)."""
    state_dir: Path_ | None = None
    """OpenClaw's state dir as the gateway sees it (``OPENCLAW_STATE_DIR``, default ``~/.openclaw``); gives agents OpenClaw's default agent dir and workspace. Not rendered."""


class McpConfig(OpenPart):
    """Settings for all MCP servers (OpenClaw ``mcp``; its ``servers`` are the McpServer resources)."""

    session_idle_ttl_ms: Annotated[int, Field(ge=0)] | None = None
    """Idle time after which an agent session's MCP runtimes are closed; 0 = never."""


class PluginsConfig(OpenPart):
    """OpenClaw plugins: activation, and ``load``, ``slots`` and ``entries`` (with each plugin's ``config``)."""

    enabled: bool | None = None
    """``false`` turns every plugin off."""
    allow: list[NonEmptyStr] | None = None
    """Plugins allowed; a non-empty list turns off the rest."""
    deny: list[NonEmptyStr] | None = None
    """Plugins never loaded."""


DEFAULT_ENDPOINT_MAX_SESSIONS = 32
DEFAULT_ENDPOINT_SESSION_IDLE_TTL_MS = 600_000


class EndpointSessions(Model):
    """Session limits of one of the supervisor's own MCP endpoints (one accounting for all its consumers)."""

    max_sessions: Annotated[int, Field(ge=1, le=10_000)] | None = None
    """Client sessions open at once (default 32). At the limit the least-recently-used idle session (no request in flight, no open stream) is closed to make room; when none is idle, one more is refused."""
    max_sessions_per_consumer: Annotated[int, Field(ge=1, le=10_000)] | None = None
    """Sessions one consumer (one token) may hold; at its share its own least-recently-used idle session makes room, else it is refused. Absent: three quarters of ``maxSessions`` (rounded up)."""
    session_idle_ttl_ms: Annotated[int, Field(gt=0, le=2_147_483_647)] | None = None
    """A session with no request in flight and no open stream for this long after its last use is closed (default 600000); a ``ping`` is not a use."""


class GatewayEndpoint(Model):
    """Where the local supervisor serves hosted MCP servers."""

    host: Literal["127.0.0.1", "::1", "localhost"] = "127.0.0.1"
    """Loopback address to bind."""
    port: Annotated[int, Field(ge=0, le=65535)] = 0
    """Port; 0 picks a free one."""
    agent_sessions: EndpointSessions | None = None
    """Sessions of the per-agent endpoints ``/mcp/agents/<agent>``, all agents together; each agent's token is one consumer. Every session starts its own process of each ``perClient`` server it uses."""
    control_sessions: EndpointSessions | None = None
    """Sessions of the control plane ``/mcp/_clawplane``."""
    skills: bool = True
    """Serve each agent's eligible skills (its snapshot's, same order) on ``/mcp/agents/<agent>`` as MCP skills (SEP-2640: ``skill://<name>/SKILL.md`` resources, ``skills/list``); ``false`` turns it off."""


class PlanAction(enum.StrEnum):
    """A plan action an approval rule can hold."""

    CREATE = "create"
    REPLACE = "replace"
    UPDATE = "update"
    DELETE = "delete"


class LabelSelector(Model):
    """Resources whose labels include all of these (Kubernetes ``matchLabels``)."""

    match_labels: Annotated[dict[str, str], Field(min_length=1)]
    """Label key → value; every pair must be present."""


DEFAULT_APPROVAL_TTL_MS = 86_400_000


class ApprovalRule(Model):
    """Plan actions that wait for an approval instead of being applied (every given criterion must match)."""

    name: NonEmptyStr | None = None
    """A name for the rule, shown with the actions it holds."""
    kinds: Annotated[list[NonEmptyStr], Field(min_length=1)] | None = None
    """Resource kinds (``McpServer``, ``Agent``, ``Channel``, ``Skill``, ``Gateway``); absent = every kind."""
    actions: Annotated[list[PlanAction], Field(min_length=1)] | None = None
    """Plan actions (``create``, ``replace``, ``update``, ``delete``); absent = every one."""
    names: Annotated[list[NonEmptyStr], Field(min_length=1)] | None = None
    """Resource names or ``*`` globs; absent = every name."""
    selector: LabelSelector | None = None
    """Only resources with these labels (for a delete, the labels it had when last applied)."""
    fields: Annotated[list[NonEmptyStr], Field(min_length=1)] | None = None
    """Only changes to these field paths or below them (e.g. ``spec.command``, ``spec.env``); a delete changes none."""
    ttl_ms: Annotated[int, Field(gt=0, le=31_536_000_000)] = DEFAULT_APPROVAL_TTL_MS
    """How long the approval request stays answerable before it expires."""


class ApprovalsConfig(OpenPart):
    """Plan approvals (clawplane's ``rules``: which changes a commit makes wait for a human answer),
    and OpenClaw's own ``approvals`` (``exec``, ``plugin``)."""

    OWN: ClassVar[frozenset[str]] = frozenset({"rules"})

    rules: list[ApprovalRule] = Field(default_factory=list)
    """Rules; an action matched by any rule is held until its approval is answered."""


class GatewaySecrets(OpenPart):
    """Where the local supervisor finds the values of ``valueFrom.env`` references (``envFile``), and
    OpenClaw's own ``secrets`` (``providers``, ``defaults``, ``egressProxy``)."""

    OWN: ClassVar[frozenset[str]] = frozenset({"envFile"})

    env_file: Path_ | None = None
    """A ``KEY=VALUE`` file (dotenv syntax) read on every reconcile; its names win over the environment.
    Relative to the Gateway's file. Rotate a secret by editing it: the servers using that value restart."""


class OsPlatform(enum.StrEnum):
    """Platforms skills can be gated on."""

    LINUX = "linux"
    DARWIN = "darwin"
    WIN32 = "win32"


class GatewaySpec(OpenPart):
    """Folder-wide settings, and every top-level section of OpenClaw's config by its own name."""

    OWN: ClassVar[frozenset[str]] = frozenset(
        {"endpoint", "observability", "allowedPaths", "config", "configUnchecked"}
    )

    skills: SkillsConfig = Field(default_factory=SkillsConfig)
    """Skill discovery and gating."""
    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    """Agent defaults."""
    mcp: McpConfig = Field(default_factory=McpConfig)
    """Settings for all MCP servers."""
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    """Plugin activation."""
    tools: ToolPolicy = Field(default_factory=ToolPolicy)
    """Tool policy for every agent."""
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    """How declared ModelProviders combine with OpenClaw's bundled model catalogs."""
    session: SessionConfig | None = None
    """Session policy: DM/group scoping, resets, send policy, thread bindings, maintenance."""
    endpoint: GatewayEndpoint = Field(default_factory=GatewayEndpoint)
    """Local endpoint for hosted MCP servers."""
    observability: Observability = Field(default_factory=Observability)
    """clawplane's own traces and audit trail of tool calls (not OpenClaw's ``diagnostics.otel``)."""
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    """Plan approvals: changes held until someone approves them."""
    secrets: GatewaySecrets = Field(default_factory=GatewaySecrets)
    """Where the local supervisor reads ``valueFrom.env`` values from (besides its environment)."""
    allowed_paths: list[Path_] = Field(default_factory=list)
    """Folders outside the resource folder that ``valueFrom.file``, ``cwd`` and skills ``extraDirs`` may
    use without a warning (relative to the Gateway's file; ``~`` is the home folder)."""
    config: dict[str, Any] = Field(default_factory=dict)
    """Raw OpenClaw config merged under the rendered openclaw.json: the escape hatch for keys of an OpenClaw newer than the one clawplane targets. Checked against OpenClaw's schema like everything else; prefer the sections by name under ``spec``."""
    config_unchecked: list[NonEmptyStr] = Field(default_factory=list)
    """Dotted paths under ``config`` (e.g. ``gateway.newThing``) passed to OpenClaw without checking: keys an OpenClaw newer than the one clawplane targets knows."""

    def openclaw_view(self) -> dict[str, Any]:
        """What the Gateway sets of openclaw.json, by OpenClaw's names: ``config`` with the sections
        written under ``spec`` over it (references kept as ``ValueFrom``, paths as written)."""
        return dict(deep_merged(self.config, openclaw_view(self)))


class Gateway(Resource):
    """Folder-wide settings; at most one per folder or namespace."""

    KIND: ClassVar[str] = "Gateway"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("gw",)
    PLURAL: ClassVar[str] = "gateways"

    kind: Literal["Gateway"]
    spec: GatewaySpec = Field(default_factory=GatewaySpec)
    """Desired configuration."""


_ = Path_
