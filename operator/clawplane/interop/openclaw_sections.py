"""OpenClaw's ``skills``/``agents``/``plugins``/``tools``/``channels``/``bindings`` → clawplane specs.

Keys with a clawplane field are mapped; the rest of a section is carried as raw OpenClaw
config (Gateway ``spec.config``), which the renderer merges back under what it renders.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawplane.interop.openclaw_env import OpenClawEnv
from clawplane.interop.openclaw_roots import openclaw_path
from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.values import import_secret
from clawplane.models.channel import CHANNEL_TYPES
from clawplane.naming.channelfields import channel_fields

_TOOL_KEYS = ("profile", "allow", "alsoAllow", "deny")
_LIMIT_KEYS = (
    "maxCandidatesPerRoot",
    "maxSkillsLoadedPerSource",
    "maxSkillsInPrompt",
    "maxSkillsPromptChars",
    "maxSkillFileBytes",
)
_GROUP_KEYS = ("requireMention", "allowFrom", "enabled", "groupPolicy")
_POLICY_KEYS = ("enabled", "dmPolicy", "allowFrom", "groupPolicy", "groupAllowFrom")


def _take(
    source: Mapping[str, Any],
    keys: tuple[str, ...],
    path: ConfigPath,
    report: ImportReport,
    into: dict[str, Any],
) -> None:
    """Copy ``keys`` into ``into``; carry every other key of ``source`` as raw config."""
    for key, value in source.items():
        if key in keys:
            into[key] = value
        else:
            report.keep_raw((*path, key), value)


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


def import_skills(
    skills: Mapping[str, Any],
    report: ImportReport,
    providers: Mapping[str, Any],
    env: OpenClawEnv | None = None,
) -> dict[str, Any]:
    """``skills`` → Gateway ``spec.skills``."""
    out: dict[str, Any] = {}
    for key, value in skills.items():
        path: ConfigPath = ("skills", key)
        if key == "allowBundled":
            out["allowBundled"] = skill_names(value, path, report)
        elif key == "load" and isinstance(value, Mapping):
            out["load"] = {}
            _take(value, ("extraDirs", "allowSymlinkTargets", "watch"), path, report, out["load"])
            for name in ("extraDirs", "allowSymlinkTargets"):
                items = out["load"].get(name)
                if isinstance(items, list):
                    out["load"][name] = [
                        openclaw_path(item, env, (*path, name, i), report) for i, item in enumerate(items)
                    ]
                for i, item in enumerate(out["load"].get(name, [])):
                    if isinstance(item, str) and not item.startswith(("/", "~")):
                        report.warn(
                            "import.relative-path",
                            (*path, name, i),
                            "relative path: OpenClaw resolves "
                            "it against its working directory, clawplane against the resource file",
                        )
        elif key == "limits" and isinstance(value, Mapping):
            out["limits"] = {}
            _take(value, _LIMIT_KEYS, path, report, out["limits"])
        elif key == "entries" and isinstance(value, Mapping):
            out["entries"] = {
                name: _skill_entry(name, entry, report, providers)
                for name, entry in value.items()
                if isinstance(entry, Mapping)
            }
        else:
            report.keep_raw(path, value)
    return out


def _skill_entry(
    name: str, entry: Mapping[str, Any], report: ImportReport, providers: Mapping[str, Any]
) -> dict[str, Any]:
    path: ConfigPath = ("skills", "entries", name)
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "apiKey":
            imported = import_secret(value, key, (*path, key), report, providers, credential=True)
            if imported is not None:
                out["apiKey"] = imported
        elif key == "env" and isinstance(value, Mapping):
            env = {k: import_secret(v, k, (*path, "env", k), report, providers) for k, v in value.items()}
            out["env"] = {k: v for k, v in env.items() if v is not None}
        elif key in ("enabled", "config"):
            out[key] = value
        else:
            report.keep_raw((*path, key), value)
    return out


def import_agents(
    agents: Mapping[str, Any], report: ImportReport, env: OpenClawEnv | None = None
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``agents`` → (Gateway ``spec.agents``, Agent specs by id)."""
    gateway: dict[str, Any] = {}
    specs: dict[str, dict[str, Any]] = {}
    for key, value in agents.items():
        if key == "defaults" and isinstance(value, Mapping):
            gateway.update(_agent_defaults(value, report, env))
        elif key == "entries" and isinstance(value, Mapping):
            for agent, entry in value.items():
                if isinstance(entry, Mapping):
                    specs[agent] = _agent_entry(agent, entry, report, gateway, env)
                else:
                    report.unmapped(("agents", "entries", agent), "an agent entry must be an object")
        elif key == "ownership":
            report.info(
                "import.derived",
                ("agents", key),
                "clawplane writes ownership itself (explicit for more than one agent)",
            )
        else:
            report.keep_raw(("agents", key), value)
    return gateway, specs


def _agent_defaults(
    defaults: Mapping[str, Any], report: ImportReport, env: OpenClawEnv | None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    mapped: dict[str, Any] = {}
    for key, value in defaults.items():
        path: ConfigPath = ("agents", "defaults", key)
        if key == "skills":
            mapped[key] = skill_names(value, path, report)
        elif key == "workspace":
            mapped[key] = openclaw_path(value, env, path, report)
        elif key == "model" and isinstance(value, str):
            mapped[key] = value
        elif key == "systemAgent" and isinstance(value, Mapping) and set(value) == {"agentId"}:
            out["defaultAgent"] = value["agentId"]
        else:
            report.keep_raw(path, value)
    if mapped:
        out["defaults"] = mapped
    return out


def _agent_entry(
    agent: str,
    entry: Mapping[str, Any],
    report: ImportReport,
    gateway: dict[str, Any],
    env: OpenClawEnv | None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for key, value in entry.items():
        path: ConfigPath = ("agents", "entries", agent, key)
        if key == "skills":
            spec[key] = skill_names(value, path, report)
        elif key in ("workspace", "agentDir"):
            spec[key] = openclaw_path(value, env, path, report)
        elif key in ("description", "model"):
            spec[key] = value
        elif key == "skillsLimits" and isinstance(value, Mapping):
            spec[key] = {}
            _take(value, ("maxSkillsPromptChars",), path, report, spec[key])
        elif key == "tools" and isinstance(value, Mapping):
            spec[key] = {}
            _take(value, _TOOL_KEYS, path, report, spec[key])
        elif key == "default" and value is True:
            gateway.setdefault("defaultAgent", agent)
            report.changed(path, "legacy default agent marker → Gateway agents.defaultAgent")
        else:
            report.keep_raw(path, value)
    return spec


def import_policy(
    section: str, value: Mapping[str, Any], keys: tuple[str, ...], report: ImportReport
) -> dict[str, Any]:
    """``plugins``/``tools``: the keys clawplane types, the rest raw."""
    out: dict[str, Any] = {}
    _take(value, keys, (section,), report, out)
    return out


def import_channels(
    channels: Mapping[str, Any], bindings: Any, report: ImportReport, providers: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """``channels`` (+ channel-wide route ``bindings``) → Channel specs by type."""
    specs: dict[str, dict[str, Any]] = {}
    for kind, block in channels.items():
        if kind not in CHANNEL_TYPES or not isinstance(block, Mapping):
            report.keep_raw(("channels", kind), block)
            continue
        specs[kind] = _channel(kind, block, report, providers)
    _bindings(bindings, specs, report)
    return specs


def _channel(
    kind: str, block: Mapping[str, Any], report: ImportReport, providers: Mapping[str, Any]
) -> dict[str, Any]:
    fields = channel_fields(kind)
    spec: dict[str, Any] = {"type": kind}
    credentials: dict[str, Any] = {}
    for key, value in block.items():
        path: ConfigPath = ("channels", kind, key)
        if key in _POLICY_KEYS:
            spec[key] = value
        elif key == "groups" and isinstance(value, Mapping):
            spec["groups"] = {
                gid: _group(kind, str(gid), g, report) for gid, g in value.items() if isinstance(g, Mapping)
            }
        elif key in fields.secret_inputs or (key in fields.credentials and not key.endswith("File")):
            imported = import_secret(value, key, path, report, providers, credential=True)
            if imported is not None:
                credentials[key] = imported
        else:
            report.keep_raw(path, value)
    if credentials:
        spec["credentials"] = credentials
    return spec


def _group(kind: str, gid: str, group: Mapping[str, Any], report: ImportReport) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _take(group, _GROUP_KEYS, ("channels", kind, "groups", gid), report, out)
    return out


def _bindings(bindings: Any, specs: dict[str, dict[str, Any]], report: ImportReport) -> None:
    if bindings is None:
        return
    if not isinstance(bindings, list):
        report.keep_raw(("bindings",), bindings)
        return
    raw: list[Any] = []
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
            # Finer routing (peer, account, guild, team, roles, acp) stays raw config; the renderer
            # writes raw bindings first and the channel-wide ones after them.
            raw.append(binding)
    if raw:
        report.keep_raw(("bindings",), raw)


def _channel_wide(binding: Any) -> str | None:
    if not isinstance(binding, Mapping) or binding.get("type", "route") != "route":
        return None
    match = binding.get("match")
    if set(binding) - {"type", "agentId", "match", "comment"} or not isinstance(binding.get("agentId"), str):
        return None
    if not isinstance(match, Mapping) or set(match) != {"channel"} or not isinstance(match["channel"], str):
        return None
    return match["channel"]
