"""Resource models: the single source of truth for clawplane's vocabulary."""

from __future__ import annotations

from clawplane.models.agent import Agent, AgentSpec, ModelChoice, ToolPolicy
from clawplane.models.base import AGENT_ID_RE, API_GROUP, API_VERSION, NAME_RE, Model, ObjectMeta, Resource
from clawplane.models.channel import CHANNEL_TYPES, Channel, ChannelSpec, DmPolicy, GroupPolicy
from clawplane.models.descriptions import describe_models
from clawplane.models.gateway import (
    DEFAULT_ENDPOINT_MAX_SESSIONS,
    DEFAULT_ENDPOINT_SESSION_IDLE_TTL_MS,
    ApprovalRule,
    EndpointSessions,
    Gateway,
    GatewayEndpoint,
    GatewaySpec,
    SkillEntry,
)
from clawplane.models.mcpserver import (
    DEFAULT_CONNECTION_TIMEOUT_MS,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_REQUEST_TIMEOUT_MS,
    DEFAULT_SESSION_IDLE_TTL_MS,
    LEGACY_TYPE_ALIASES,
    ApprovalMode,
    Hosting,
    McpClient,
    McpServer,
    McpServerSpec,
    OAuthIdentity,
    SessionAffinity,
    SessionMode,
    ToolApproval,
    ToolFilter,
    Transport,
)
from clawplane.models.modelprovider import (
    PROVIDER_ID_PATTERN,
    ModelApi,
    ModelProvider,
    ModelProviderSpec,
    ProviderAuth,
)
from clawplane.models.observability import AuditSettings, MetricExport, Observability, TraceExport
from clawplane.models.openparts import OpenPart, OpenValue
from clawplane.models.session import SessionConfig, byte_size, duration_ms
from clawplane.models.skill import Skill, SkillSpec
from clawplane.models.values import (
    SecretKeyRef,
    SecretValue,
    ValueFrom,
    ValueSource,
    admits_reference,
    is_reference,
    literal_text,
    secret_fields,
)

AnyResource = Gateway | McpServer | ModelProvider | Agent | Channel | Skill

KINDS: dict[str, type[Resource]] = {
    cls.KIND: cls for cls in (Gateway, McpServer, ModelProvider, Agent, Channel, Skill)
}

__all__ = [
    "AGENT_ID_RE",
    "API_GROUP",
    "API_VERSION",
    "CHANNEL_TYPES",
    "DEFAULT_CONNECTION_TIMEOUT_MS",
    "DEFAULT_ENDPOINT_MAX_SESSIONS",
    "DEFAULT_ENDPOINT_SESSION_IDLE_TTL_MS",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REQUEST_TIMEOUT_MS",
    "DEFAULT_SESSION_IDLE_TTL_MS",
    "KINDS",
    "LEGACY_TYPE_ALIASES",
    "NAME_RE",
    "PROVIDER_ID_PATTERN",
    "Agent",
    "AgentSpec",
    "AnyResource",
    "ApprovalMode",
    "ApprovalRule",
    "AuditSettings",
    "Channel",
    "ChannelSpec",
    "DmPolicy",
    "EndpointSessions",
    "Gateway",
    "GatewayEndpoint",
    "GatewaySpec",
    "GroupPolicy",
    "Hosting",
    "McpClient",
    "McpServer",
    "McpServerSpec",
    "MetricExport",
    "Model",
    "ModelApi",
    "ModelChoice",
    "ModelProvider",
    "ModelProviderSpec",
    "OAuthIdentity",
    "ObjectMeta",
    "Observability",
    "OpenPart",
    "OpenValue",
    "ProviderAuth",
    "Resource",
    "SecretKeyRef",
    "SecretValue",
    "SessionAffinity",
    "SessionConfig",
    "SessionMode",
    "Skill",
    "SkillEntry",
    "SkillSpec",
    "ToolApproval",
    "ToolFilter",
    "ToolPolicy",
    "TraceExport",
    "Transport",
    "ValueFrom",
    "ValueSource",
    "admits_reference",
    "byte_size",
    "describe_models",
    "duration_ms",
    "is_reference",
    "literal_text",
    "secret_fields",
]
