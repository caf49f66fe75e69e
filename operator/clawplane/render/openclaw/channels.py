"""Channel resources → OpenClaw's ``channels.<type>``, route ``bindings`` and mention patterns.

A channel's block is its OpenClaw keys as written (connection settings, ``accounts``, ``dm``,
``guilds``, …), its ``credentials`` (the same keys kept apart), and the typed policy fields,
each only where OpenClaw's schema of that channel has it (matrix keeps its DM policy in ``dm``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import Channel, DmPolicy, GroupPolicy, literal_text
from clawplane.naming import REJECTED_CHANNELS
from clawplane.render.openclaw.agents import agent_id
from clawplane.render.openclaw.keys import KeyRenderer
from clawplane.render.paths import base_dir_of
from clawplane.render.secretvalues import SecretRenderer
from clawplane.schema.openclaw import ANY, Node, admits_string, child, declared_keys, node_at, types_of

MATRIX_DM_KEYS = {"dmPolicy": "policy", "allowFrom": "allowFrom"}

_DEFAULTS: dict[str, Any] = {
    "enabled": True,
    "dmPolicy": DmPolicy.PAIRING,
    "groupPolicy": GroupPolicy.ALLOWLIST,
}


@dataclass
class RenderedChannels:
    """What channels add to openclaw.json."""

    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    bindings: list[dict[str, Any]] = field(default_factory=list)
    agent_mentions: dict[str, list[str]] = field(default_factory=dict)
    """``agents.entries.<id>.groupChat.mentionPatterns`` per agent id."""
    global_mentions: list[str] = field(default_factory=list)
    """``messages.groupChat.mentionPatterns`` (channels no known agent answers)."""


def render_channels(
    channels: Sequence[Channel],
    *,
    agent_ids: Sequence[str],
    default_agent: str | None,
    base_dirs: Mapping[str, Path],
    secrets: SecretRenderer,
    diagnostics: list[Diagnostic],
) -> RenderedChannels:
    """Every channel's policies and credentials, its agent binding and its mention patterns."""
    out = RenderedChannels()
    mention_sources: dict[str | None, list[Channel]] = {}
    for channel in channels:
        kind = channel.spec.type
        if kind in out.channels:
            diagnostics.append(
                _diag(
                    Severity.ERROR,
                    "render.channel-duplicate",
                    f"another Channel already renders channels.{kind}; this one is left out",
                    channel,
                    "spec.type",
                )
            )
            continue
        if kind in REJECTED_CHANNELS:
            diagnostics.append(
                _diag(
                    Severity.ERROR,
                    "render.channel-rejected",
                    f"channels.{kind} left out: {REJECTED_CHANNELS[kind]}",
                    channel,
                    "spec.type",
                )
            )
            continue
        node = node_at(("channels", kind)) or {}
        base_dir = base_dir_of(channel, base_dirs)
        keys = KeyRenderer(secrets=secrets, base_dir=base_dir, resource=channel.key)
        policies = _policies(channel, node, keys, diagnostics)
        block = keys.keys(channel.spec, node, "")
        block.update(_credentials(channel, node, keys, diagnostics))
        _merge_policies(block, policies)
        patterns = channel.spec.mention_patterns
        if isinstance(patterns, dict):
            # OpenClaw's own channel mentionPatterns (where patterns apply), not clawplane's regex list.
            scope = child(node, "mentionPatterns") or ANY
            block["mentionPatterns"] = keys.typed(patterns, scope, "mentionPatterns")
        out.channels[kind] = block
        target = _binding(channel, agent_ids, default_agent, out, diagnostics)
        if patterns and isinstance(patterns, list):
            mention_sources.setdefault(target, []).append(channel)
    _mentions(mention_sources, out, diagnostics)
    return out


def _policies(
    channel: Channel, node: Node, keys: KeyRenderer, diagnostics: list[Diagnostic]
) -> dict[str, Any]:
    spec = channel.spec
    values: dict[str, Any] = {
        "enabled": spec.enabled,
        "dmPolicy": spec.dm_policy.value,
        "allowFrom": list(spec.allow_from),
        "groupPolicy": spec.group_policy.value,
        "groupAllowFrom": list(spec.group_allow_from),
        "groups": _groups(channel, node, keys, diagnostics),
    }
    declared = set(declared_keys(node))
    fields = type(spec).model_fields
    given = {fields[name].alias or name for name in spec.model_fields_set if name in fields}
    block: dict[str, Any] = {}
    for key, value in values.items():
        meaningful = value != _DEFAULTS.get(key, []) and value != {}
        if spec.type == "matrix" and key in MATRIX_DM_KEYS:
            # OpenClaw's matrix channel keeps these under dm (dm.policy, dm.allowFrom).
            if key in given:
                block.setdefault("dm", {})[MATRIX_DM_KEYS[key]] = value
            continue
        if key not in declared:
            if meaningful:
                diagnostics.append(
                    _diag(
                        Severity.WARNING,
                        "render.channel-field-unsupported",
                        f"OpenClaw's {spec.type} channel has no {key}; not rendered",
                        channel,
                        f"spec.{key}",
                    )
                )
            continue
        # dmPolicy/groupPolicy/enabled always written: OpenClaw's defaults differ per channel.
        if key in _DEFAULTS or meaningful:
            block[key] = value
    return block


def _merge_policies(block: dict[str, Any], policies: dict[str, Any]) -> None:
    """Typed policy fields over the keys written by name (``dm`` is merged key by key)."""
    for key, value in policies.items():
        if isinstance(value, dict) and isinstance(block.get(key), dict):
            block[key] = {**block[key], **value}
        else:
            block[key] = value


def _groups(channel: Channel, node: Node, keys: KeyRenderer, diagnostics: list[Diagnostic]) -> dict[str, Any]:
    groups = child(node, "groups")
    if groups is None:
        return {group_id: {} for group_id in channel.spec.groups}  # reported by the caller
    entry = child(groups, "*") or ANY
    known = set(declared_keys(entry))
    out: dict[str, Any] = {}
    for group_id, settings in channel.spec.groups.items():
        data = keys.part(settings, entry, f"groups.{group_id}")
        for key in sorted(set(data) - known) if known else []:
            diagnostics.append(
                _diag(
                    Severity.WARNING,
                    "render.channel-field-unsupported",
                    f"OpenClaw's {channel.spec.type} groups have no {key}; not rendered",
                    channel,
                    f"spec.groups.{group_id}.{key}",
                )
            )
            del data[key]
        out[group_id] = data
    return out


def _credentials(
    channel: Channel, node: Node, keys: KeyRenderer, diagnostics: list[Diagnostic]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in channel.spec.credentials.items():
        path = f"credentials.{key}"
        sub = child(node, key)
        if sub is None or key not in declared_keys(node):
            known = ", ".join(declared_keys(node)) or "none"
            diagnostics.append(
                _diag(
                    Severity.ERROR,
                    "render.channel-credential-unknown",
                    f"OpenClaw's {channel.spec.type} channel has no key {key!r} (known: {known}); left out",
                    channel,
                    f"spec.{path}",
                )
            )
            continue
        rendered = keys.typed(value, sub, path)
        scalar = isinstance(rendered, int | float | bool)
        if scalar and admits_string(sub) and not _admits_scalar(sub, rendered):
            rendered = literal_text(rendered)  # a number written for a string key
        out[key] = rendered
    return out


def _admits_scalar(node: Node, value: Any) -> bool:
    kinds = types_of(node)
    if not kinds:
        return True
    if isinstance(value, bool):
        return "boolean" in kinds
    return "number" in kinds or ("integer" in kinds and isinstance(value, int))


def _binding(
    channel: Channel,
    agent_ids: Sequence[str],
    default_agent: str | None,
    out: RenderedChannels,
    diagnostics: list[Diagnostic],
) -> str | None:
    """Adds the route binding; returns the agent id that answers the channel (None if unknown)."""
    if channel.spec.agent is None:
        if default_agent is None and len(agent_ids) > 1:
            diagnostics.append(
                _diag(
                    Severity.WARNING,
                    "render.channel-unrouted",
                    f"no agent answers channel {channel.spec.type!r}: several agents and no "
                    "default (OpenClaw fails closed)",
                    channel,
                    "spec.agent",
                    hint="set spec.agent, or the Gateway's agents.defaultAgent",
                )
            )
        return default_agent if default_agent in agent_ids else None
    target = agent_id(channel.spec.agent)
    if target not in agent_ids:
        diagnostics.append(
            _diag(
                Severity.ERROR,
                "render.channel-agent-unknown",
                f"agent {channel.spec.agent!r} is not declared; binding left out",
                channel,
                "spec.agent",
            )
        )
        return None
    out.bindings.append({"type": "route", "agentId": target, "match": {"channel": channel.spec.type}})
    return target


def _mentions(
    sources: Mapping[str | None, list[Channel]], out: RenderedChannels, diagnostics: list[Diagnostic]
) -> None:
    # OpenClaw keeps regex mention patterns per agent (agents.entries.<id>.groupChat) or globally
    # (messages.groupChat); channels.<type>.mentionPatterns only scopes where they apply.
    for target, channels in sources.items():
        patterns: list[str] = []
        for channel in channels:
            patterns.extend(p for p in _regexes(channel) if p not in patterns)
        if len(channels) > 1 and any(_regexes(c) != patterns for c in channels):
            where = f"agent {target!r}" if target else "every channel"
            for channel in channels:
                diagnostics.append(
                    _diag(
                        Severity.WARNING,
                        "render.mention-patterns-merged",
                        f"mention patterns of several channels are merged for {where}",
                        channel,
                        "spec.mentionPatterns",
                    )
                )
        if target is None:
            out.global_mentions.extend(p for p in patterns if p not in out.global_mentions)
        else:
            out.agent_mentions[target] = patterns


def _regexes(channel: Channel) -> list[str]:
    patterns = channel.spec.mention_patterns
    return list(patterns) if isinstance(patterns, list) else []


def _diag(
    severity: Severity, code: str, message: str, channel: Channel, path: str, hint: str = ""
) -> Diagnostic:
    return Diagnostic(severity, code, message, path=path, hint=hint, resource=channel.key)
