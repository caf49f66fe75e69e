"""Channel: one chat channel with its DM and group policies (``channels.<type>``)."""

from __future__ import annotations

import enum
from typing import ClassVar, Literal

from pydantic import Field, StrictInt, StrictStr

from clawplane.models.base import AgentId, Resource
from clawplane.models.openparts import OpenPart, OpenValue
from clawplane.models.values import SecretValue

# The channel ids in OpenClaw 2026.9.6's config schema.
CHANNEL_TYPES: tuple[str, ...] = (
    "a2a", "buzz", "clickclack", "discord", "feishu", "googlechat", "imessage", "irc", "line",
    "matrix", "mattermost", "msteams", "nextcloud-talk", "nostr", "qa-channel", "raft", "reef",
    "signal", "slack", "sms", "synology-chat", "telegram", "tlon", "twitch", "whatsapp", "zalo",
    "zalouser",
)  # fmt: skip

ChannelType = Literal[
    "a2a", "buzz", "clickclack", "discord", "feishu", "googlechat", "imessage", "irc", "line",
    "matrix", "mattermost", "msteams", "nextcloud-talk", "nostr", "qa-channel", "raft", "reef",
    "signal", "slack", "sms", "synology-chat", "telegram", "tlon", "twitch", "whatsapp", "zalo",
    "zalouser",
]  # fmt: skip


class DmPolicy(enum.StrEnum):
    """Who may message the agent directly."""

    PAIRING = "pairing"
    ALLOWLIST = "allowlist"
    OPEN = "open"
    DISABLED = "disabled"


class GroupPolicy(enum.StrEnum):
    """How group messages are admitted."""

    OPEN = "open"
    DISABLED = "disabled"
    ALLOWLIST = "allowlist"
    ALLOWALL = "allowall"
    """feishu only (OpenClaw's schema refuses it on the other channels)."""


Sender = StrictStr | StrictInt


class GroupSettings(OpenPart):
    """Settings for one group (or ``"*"`` for every group), with every other key OpenClaw's channel takes for a group."""

    require_mention: bool | None = None
    """Only answer when mentioned."""
    allow_from: list[Sender] | None = None
    """Senders admitted in this group."""
    enabled: bool | None = None
    """``false`` ignores this group."""
    group_policy: GroupPolicy | None = None
    """Overrides the channel's group policy for this group."""


class ChannelSpec(OpenPart):
    """Desired configuration of one chat channel: clawplane's fields and every key of OpenClaw's
    ``channels.<type>`` (connection settings, ``accounts``, ``dm``, ``guilds``, …)."""

    OWN: ClassVar[frozenset[str]] = frozenset({"type", "agent", "credentials", "mentionPatterns"})

    type: ChannelType
    """Channel id as OpenClaw names it (``telegram``, ``slack``, ``discord``, …)."""
    enabled: bool = True
    """``false`` keeps the declaration but disables the channel."""
    dm_policy: DmPolicy = DmPolicy.PAIRING
    """``pairing`` (default), ``allowlist``, ``open`` (needs ``"*"`` in allowFrom) or ``disabled``."""
    allow_from: list[Sender] = Field(default_factory=list)
    """Senders admitted in DMs; ``"*"`` admits everyone."""
    group_policy: GroupPolicy = GroupPolicy.ALLOWLIST
    """``allowlist`` (default), ``open`` or ``disabled``."""
    group_allow_from: list[Sender] = Field(default_factory=list)
    """Senders admitted in groups."""
    groups: dict[str, GroupSettings] = Field(default_factory=dict)
    """Per-group settings keyed by group id; ``"*"`` sets defaults for all groups."""
    mention_patterns: list[str] | dict[str, OpenValue] = Field(default_factory=list)
    """A list: regular expressions that count as mentioning the agent (clawplane renders them into the
    answering agent's ``groupChat.mentionPatterns``). A mapping: OpenClaw's own channel ``mentionPatterns``
    (``mode``, ``allowIn``, ``denyIn``: where mention patterns apply), written as given."""
    agent: AgentId | None = None
    """Agent id that answers on this channel (default: the default agent)."""
    credentials: dict[str, SecretValue] = Field(default_factory=dict)
    """Keys of the channel's OpenClaw config kept apart (e.g. ``botToken``), best as ``valueFrom``
    references; the same as writing them directly under ``spec``."""


class Channel(Resource):
    """A chat channel."""

    KIND: ClassVar[str] = "Channel"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("chan",)
    PLURAL: ClassVar[str] = "channels"

    kind: Literal["Channel"]
    spec: ChannelSpec
    """Desired configuration."""
