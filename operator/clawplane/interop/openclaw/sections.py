"""OpenClaw's ``skills``, ``agents``, ``channels`` and ``bindings``: what needs more than keys by name.

Most of a section lands under the Gateway's ``spec`` by its own name (``openclaw.keys``);
these sections also hold other resources (``agents.entries`` → Agents, ``channels.<type>``
→ Channels), ids clawplane writes elsewhere (the system agent, channel-wide route
bindings), or paths and skill names OpenClaw reads in its own way (trimmed names, ``~``
under ``OPENCLAW_HOME``). The functions here prepare those parts; every value still goes
through ``openclaw.keys`` afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clawplane.interop.openclaw.env import OpenClawEnv
from clawplane.interop.openclaw.keys import Home, KeyImporter
from clawplane.interop.openclaw.roots import openclaw_path
from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.models import CHANNEL_TYPES, AgentSpec, ChannelSpec
from clawplane.schema.openclaw import declared_keys, node_at
from clawplane.schema.openclaw.homes import GATEWAY_CHANNEL_KEYS


def skill_names(value: Any, path: ConfigPath, report: ImportReport) -> Any:
    """A skill list as OpenClaw reads it: names trimmed, blank ones dropped (with a warning each)."""
    if not isinstance(value, list):
        return value
    names: list[Any] = []
    for i, item in enumerate(value):
        if isinstance(item, str) and not item.strip():
            report.warn(
                "import.blank-skill-name",
                (*path, i),
                f"blank skill name {item!r} dropped (OpenClaw trims and ignores it)",
            )
        else:
            names.append(item.strip() if isinstance(item, str) else item)
    return names


def prepare_skills(
    skills: Mapping[str, Any], report: ImportReport, env: OpenClawEnv | None
) -> dict[str, Any]:
    """``skills`` with its skill names and folders as clawplane must write them."""
    out = dict(skills)
    if "allowBundled" in out:
        out["allowBundled"] = skill_names(out["allowBundled"], ("skills", "allowBundled"), report)
    load = out.get("load")
    if isinstance(load, Mapping):
        load = out["load"] = dict(load)
        for name in ("extraDirs", "allowSymlinkTargets"):
            items = load.get(name)
            if not isinstance(items, list):
                continue
            path: ConfigPath = ("skills", "load", name)
            load[name] = [openclaw_path(item, env, (*path, i), report) for i, item in enumerate(items)]
            for i, item in enumerate(load[name]):
                if isinstance(item, str) and not item.startswith(("/", "~")):
                    report.warn(
                        "import.relative-path",
                        (*path, i),
                        "relative path: OpenClaw resolves "
                        "it against its working directory, clawplane against the resource file",
                    )
    return out


@dataclass
class Agents:
    """``agents`` split: the Gateway's part (``defaults``, by name) and one Agent spec per entry."""

    gateway: dict[str, Any] = field(default_factory=dict)
    """The Gateway's ``agents`` section as OpenClaw writes it (``defaults``, unknown keys)."""
    default_agent: str | None = None
    """The system agent (``agents.defaults.systemAgent`` or a legacy ``default: true``)."""
    specs: dict[str, dict[str, Any]] = field(default_factory=dict)


def import_agents(
    agents: Mapping[str, Any],
    report: ImportReport,
    providers: Mapping[str, Any],
    env: OpenClawEnv | None = None,
) -> Agents:
    """``agents`` → the Gateway's part and one Agent spec per ``agents.entries.<id>``."""
    out = Agents()
    legacy_default: str | None = None
    for key, value in agents.items():
        if key == "defaults" and isinstance(value, Mapping):
            out.gateway[key] = _agent_defaults(value, report, env, out)
        elif key == "entries" and isinstance(value, Mapping):
            node = node_at(("agents", "entries", "*"))
            for agent, entry in value.items():
                path: ConfigPath = ("agents", "entries", agent)
                if not isinstance(entry, Mapping):
                    report.unmapped(path, "an agent entry must be an object")
                    continue
                prepared = _agent_entry(str(agent), entry, report, env)
                if prepared.get("default") is True:
                    del prepared["default"]
                    legacy_default = legacy_default or str(agent)
                    report.changed(
                        (*path, "default"), "legacy default agent marker → Gateway agents.defaultAgent"
                    )
                importer = KeyImporter(report, providers, Home(path, path))
                out.specs[str(agent)] = importer.spec(prepared, node, AgentSpec)
        elif key == "ownership":
            report.info(
                "import.derived",
                ("agents", key),
                "clawplane writes ownership itself (explicit for more than one agent)",
            )
        else:
            out.gateway[key] = value
    if out.default_agent is None:
        out.default_agent = legacy_default
    return out


def _agent_defaults(
    defaults: Mapping[str, Any], report: ImportReport, env: OpenClawEnv | None, agents: Agents
) -> dict[str, Any]:
    out = dict(defaults)
    path: ConfigPath = ("agents", "defaults")
    if "skills" in out:
        out["skills"] = skill_names(out["skills"], (*path, "skills"), report)
    if "workspace" in out:
        out["workspace"] = openclaw_path(out["workspace"], env, (*path, "workspace"), report)
    system = out.get("systemAgent")
    if isinstance(system, Mapping) and set(system) == {"agentId"} and isinstance(system["agentId"], str):
        # clawplane renders systemAgent from the Gateway's defaultAgent (and needs it to route).
        agents.default_agent = system["agentId"]
        del out["systemAgent"]
    return out


def _agent_entry(
    agent: str, entry: Mapping[str, Any], report: ImportReport, env: OpenClawEnv | None
) -> dict[str, Any]:
    out = dict(entry)
    path: ConfigPath = ("agents", "entries", agent)
    if "skills" in out:
        out["skills"] = skill_names(out["skills"], (*path, "skills"), report)
    for key in ("workspace", "agentDir"):
        if key in out:
            out[key] = openclaw_path(out[key], env, (*path, key), report)
    return out


@dataclass
class Channels:
    """``channels`` (with ``bindings``) split between the Channels and the Gateway."""

    specs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Channel specs by type."""
    gateway: dict[str, Any] = field(default_factory=dict)
    """The Gateway's ``channels`` (``defaults``, ``modelByChannel``)."""
    bindings: Any = None
    """The bindings no Channel's ``agent`` expresses (the Gateway's ``bindings``), None if none."""
    moved: dict[ConfigPath, ConfigPath] = field(default_factory=dict)
    """``("bindings", i)`` of a kept binding → its path in the source."""


def import_channels(
    channels: Mapping[str, Any], bindings: Any, report: ImportReport, providers: Mapping[str, Any]
) -> Channels:
    """``channels`` (+ channel-wide route ``bindings``) → Channel specs by type and the Gateway's part."""
    out = Channels()
    for kind, block in channels.items():
        path = ("channels", str(kind))
        if kind in GATEWAY_CHANNEL_KEYS:
            out.gateway[kind] = block
        elif kind in CHANNEL_TYPES and isinstance(block, Mapping):
            importer = KeyImporter(report, providers, Home(path, path))
            out.specs[kind] = {"type": kind, **importer.spec(block, node_at(path), ChannelSpec)}
        else:
            report.keep_raw(
                path,
                block,
                note=f"not a channel a Channel resource declares (types: {', '.join(CHANNEL_TYPES)}); "
                "carried as raw OpenClaw config in the Gateway's spec.config",
            )
            if node_at(path) is None:
                report.uncheck(path)
    out.bindings = _bindings(bindings, out.specs, report, out.moved)
    _channel_defaults(channels, out.specs, report)
    return out


def _channel_defaults(
    channels_block: Mapping[str, Any], channels: dict[str, dict[str, Any]], report: ImportReport
) -> None:
    # channels.defaults.groupPolicy is OpenClaw's cross-channel default; clawplane writes each
    # channel's groupPolicy explicitly, so the default must be copied where it applied.
    defaults = channels_block.get("defaults")
    group_policy = defaults.get("groupPolicy") if isinstance(defaults, Mapping) else None
    if not isinstance(group_policy, str):
        return
    for kind, spec in channels.items():
        if "groupPolicy" not in spec and "groupPolicy" in declared_keys(node_at(("channels", kind)) or {}):
            spec["groupPolicy"] = group_policy
            report.changed(
                ("channels", kind, "groupPolicy"), f"set from channels.defaults.groupPolicy ({group_policy})"
            )


def _bindings(
    bindings: Any, specs: dict[str, dict[str, Any]], report: ImportReport, moved: dict[ConfigPath, ConfigPath]
) -> Any:
    """Channel-wide route bindings become a Channel's ``agent``; the rest is returned as written
    (``moved`` learns where each kept one is in the source)."""
    if not isinstance(bindings, list):
        return bindings  # None, or not a list: the Gateway's checks report it
    rest: list[Any] = []
    for i, binding in enumerate(bindings):
        path: ConfigPath = ("bindings", i)
        channel = _channel_wide(binding)
        if channel is not None and channel in specs and "agent" in specs[channel]:
            report.changed(
                path,
                f"dropped: channel {channel!r} is already bound to "
                f"{specs[channel]['agent']!r}, and OpenClaw uses the first binding",
            )
        elif channel is not None and channel in specs:
            specs[channel]["agent"] = binding["agentId"]
            if "comment" in binding:
                report.changed((*path, "comment"), "binding comment dropped")
        else:
            # Finer routing (peer, account, guild, team, roles, acp) stays the Gateway's; the
            # renderer writes those first and the channel-wide ones after them.
            moved[("bindings", len(rest))] = path
            rest.append(binding)
    return rest or None


def _channel_wide(binding: Any) -> str | None:
    if not isinstance(binding, Mapping) or binding.get("type", "route") != "route":
        return None
    match = binding.get("match")
    if set(binding) - {"type", "agentId", "match", "comment"} or not isinstance(binding.get("agentId"), str):
        return None
    if not isinstance(match, Mapping) or set(match) != {"channel"} or not isinstance(match["channel"], str):
        return None
    return match["channel"]
