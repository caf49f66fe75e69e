"""Resource models: the single source of truth for clawplane's vocabulary."""

from __future__ import annotations

from clawplane.models.agent import Agent, AgentSpec
from clawplane.models.base import API_GROUP, API_VERSION, ObjectMeta, Resource
from clawplane.models.channel import CHANNEL_TYPES, Channel, ChannelSpec, DmPolicy, GroupPolicy
from clawplane.models.gateway import Gateway, GatewaySpec
from clawplane.models.mcpserver import Hosting, McpServer, McpServerSpec, SessionMode, Transport
from clawplane.models.modelprovider import ModelApi, ModelProvider, ModelProviderSpec
from clawplane.models.skill import Skill, SkillSpec
from clawplane.models.values import SecretKeyRef, SecretValue, ValueFrom, ValueSource

AnyResource = Gateway | McpServer | ModelProvider | Agent | Channel | Skill

KINDS: dict[str, type[Resource]] = {
    cls.KIND: cls for cls in (Gateway, McpServer, ModelProvider, Agent, Channel, Skill)
}

__all__ = [
    "API_GROUP",
    "API_VERSION",
    "CHANNEL_TYPES",
    "KINDS",
    "Agent",
    "AgentSpec",
    "AnyResource",
    "Channel",
    "ChannelSpec",
    "DmPolicy",
    "Gateway",
    "GatewaySpec",
    "GroupPolicy",
    "Hosting",
    "McpServer",
    "McpServerSpec",
    "ModelApi",
    "ModelProvider",
    "ModelProviderSpec",
    "ObjectMeta",
    "Resource",
    "SecretKeyRef",
    "SecretValue",
    "SessionMode",
    "Skill",
    "SkillSpec",
    "Transport",
    "ValueFrom",
    "ValueSource",
]
