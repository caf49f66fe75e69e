"""Which fields each OpenClaw 2026.9.6 channel accepts, as its config schema says.

Extracted from ``openclaw config schema`` (``properties.channels``) by
``tests/unit/render/channel_table.py``; a test re-derives it from the shared schema copy
so that a newer OpenClaw shows up as a failing test instead of as rejected configs.
Per channel: policy keys, per-group keys, credential keys (secret-looking string fields),
and the subset of those that are SecretInput fields (accept ``{source, provider, id}``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ChannelFields:
    """The fields of one channel's OpenClaw config that clawplane renders."""

    policy: frozenset[str]
    group_keys: frozenset[str]
    credentials: frozenset[str]
    secret_inputs: frozenset[str]


_RAW: dict[str, tuple[str, str, str, str]] = {
    "a2a": ("enabled", "", "", ""),
    "buzz": (
        "enabled groupPolicy groupAllowFrom groups",
        "requireMention enabled groupPolicy",
        "authTag privateKey",
        "authTag privateKey",
    ),
    "clickclack": ("enabled allowFrom groups", "requireMention", "token tokenFile", "token"),
    "discord": ("enabled dmPolicy allowFrom groupPolicy", "", "token", "token"),
    "feishu": (
        "enabled dmPolicy allowFrom groupPolicy groupAllowFrom groups",
        "requireMention allowFrom enabled",
        "appSecret encryptKey verificationToken",
        "appSecret encryptKey verificationToken",
    ),
    "googlechat": (
        "enabled dmPolicy allowFrom groupPolicy groupAllowFrom groups",
        "requireMention enabled",
        "serviceAccount serviceAccountFile",
        "serviceAccount",
    ),
    "imessage": ("enabled dmPolicy allowFrom groupPolicy groupAllowFrom groups", "requireMention", "", ""),
    "irc": (
        "enabled dmPolicy allowFrom groupPolicy groupAllowFrom groups",
        "requireMention allowFrom enabled",
        "password passwordFile",
        "",
    ),
    "line": (
        "enabled dmPolicy allowFrom groupPolicy groupAllowFrom groups",
        "requireMention allowFrom enabled",
        "channelAccessToken channelSecret secretFile tokenFile",
        "",
    ),
    "matrix": (
        "enabled groupPolicy groupAllowFrom groups",
        "requireMention enabled",
        "accessToken password",
        "accessToken password",
    ),
    "mattermost": (
        "enabled dmPolicy allowFrom groupPolicy groupAllowFrom groups",
        "requireMention",
        "botToken",
        "botToken",
    ),
    "msteams": ("enabled dmPolicy allowFrom groupPolicy groupAllowFrom", "", "appPassword", "appPassword"),
    "nextcloud-talk": (
        "enabled dmPolicy allowFrom groupPolicy groupAllowFrom",
        "",
        "apiPassword apiPasswordFile botSecret botSecretFile",
        "apiPassword botSecret",
    ),
    "nostr": ("enabled dmPolicy allowFrom", "", "privateKey", "privateKey"),
    "qa-channel": ("enabled allowFrom groupPolicy groupAllowFrom groups", "requireMention", "", ""),
    "raft": ("enabled", "", "", ""),
    "reef": ("enabled", "", "", ""),
    "signal": (
        "enabled dmPolicy allowFrom groupPolicy groupAllowFrom groups",
        "requireMention",
        "",
        "",
    ),
    "slack": (
        "enabled dmPolicy allowFrom groupPolicy",
        "",
        "appToken botToken signingSecret userToken",
        "appToken botToken signingSecret userToken",
    ),
    "sms": ("enabled dmPolicy allowFrom", "", "authToken", "authToken"),
    "synology-chat": ("", "", "", ""),
    "telegram": (
        "enabled dmPolicy allowFrom groupPolicy groupAllowFrom groups",
        "requireMention allowFrom enabled groupPolicy",
        "botToken tokenFile webhookSecret",
        "botToken webhookSecret",
    ),
    "tlon": ("enabled", "", "", ""),
    "twitch": (
        "enabled allowFrom",
        "",
        "accessToken clientSecret refreshToken",
        "",
    ),
    "whatsapp": ("enabled dmPolicy allowFrom groupPolicy groupAllowFrom groups", "requireMention", "", ""),
    "zalo": (
        "enabled dmPolicy allowFrom groupPolicy groupAllowFrom",
        "",
        "botToken tokenFile webhookSecret",
        "botToken webhookSecret",
    ),
    "zalouser": (
        "enabled dmPolicy allowFrom groupPolicy groupAllowFrom groups",
        "requireMention enabled",
        "",
        "",
    ),
}

CHANNEL_FIELDS: dict[str, ChannelFields] = {
    name: ChannelFields(*(frozenset(part.split()) for part in parts)) for name, parts in _RAW.items()
}


# Channel ids the schema lists but OpenClaw 2026.9.6 itself refuses when loading a config.
REJECTED_CHANNELS: dict[str, str] = {
    "qa-channel": "OpenClaw 2026.9.6 refuses it at load (unknown channel id)"
}


def channel_fields(channel_type: str) -> ChannelFields:
    """The known fields of ``channel_type`` (empty sets for a channel the table does not know)."""
    empty = frozenset[str]()
    return CHANNEL_FIELDS.get(channel_type, ChannelFields(empty, empty, empty, empty))
