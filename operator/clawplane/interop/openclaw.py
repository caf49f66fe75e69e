"""``clawplane import``: an existing openclaw.json → Gateway, McpServer, ModelProvider, Agent, Channel.

MCP servers are canonicalized as ``openclaw doctor --fix`` / ``openclaw mcp set`` do
(``disabled``, timeout aliases in seconds, snake_case keys, ``type``). OpenClaw keys that
have a clawplane field are mapped; the others are carried as raw OpenClaw config in the
Gateway's ``spec.config`` (rendered back unchanged), each noted. Values that cannot be
carried either way (mixed ``${VAR}`` strings, SecretRefs without a clawplane form, entries
that are not objects) are left out and reported with their file:line; one bad entry never
costs the rest of its resource. Literal secrets are kept and reported as warnings. ``models``
and ``session`` are typed throughout (``interop.openclaw_models``), so nothing of them is ever
carried raw.

The skill tiers OpenClaw finds implicitly (managed, personal, bundled, each agent's
workshop and default workspace) become explicit Gateway ``skills.roots`` and
``agents.stateDir``, computed from the environment the import runs in
(``clawplane.interop.openclaw_env``), so the imported folder sees the same skills.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import json5

from clawplane.interop.openclaw_env import OpenClawEnv
from clawplane.interop.openclaw_models import import_models, import_session
from clawplane.interop.openclaw_roots import import_roots
from clawplane.interop.openclaw_sections import (
    import_agents,
    import_channels,
    import_policy,
    import_skills,
)
from clawplane.interop.openclaw_servers import import_server
from clawplane.interop.positions import Positions, json5_positions
from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.result import ImportResult, resource_docs, resource_name
from clawplane.naming import is_blocked_env_name

_TYPED_GATEWAY = frozenset({"models", "session"})
_DROPPED = {
    "$schema": "JSON schema pointer",
    "meta": "OpenClaw's own bookkeeping (last touched version, migrations)",
}


def load_openclaw_file(path: Path) -> dict[str, Any]:
    """Parse an openclaw.json (JSON5: comments, trailing commas and bare keys allowed)."""
    return load_openclaw_text(path.read_text(encoding="utf-8"), str(path))[0]


def load_openclaw_text(text: str, name: str) -> tuple[dict[str, Any], Positions]:
    """The parsed config and where each of its keys is written."""
    data = json5.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"{name}: the top level must be an object")
    return data, json5_positions(text)


def import_openclaw_config(
    config: Mapping[str, Any],
    *,
    source: str = "openclaw.json",
    positions: Positions | None = None,
    env: OpenClawEnv | None = None,
) -> ImportResult:
    """Turn an OpenClaw config into clawplane resource documents plus a report.

    ``env``: the environment OpenClaw would read ``config`` in; with it, the implicit skill
    tiers become explicit roots (without it, as for a config that is not a file, none are written).
    """
    report = ImportReport(source, positions or {})
    raw_secrets = config.get("secrets")
    providers = raw_secrets.get("providers", {}) if isinstance(raw_secrets, Mapping) else {}
    gateway: dict[str, Any] = {}
    servers: dict[str, dict[str, Any]] = {}
    agents: dict[str, dict[str, Any]] = {}
    channels: dict[str, dict[str, Any]] = {}
    origins: dict[str, ConfigPath] = {}
    model_providers: dict[str, dict[str, Any]] = {}
    for key, value in config.items():
        if key in _DROPPED:
            report.info("import.dropped", (key,), f"left out: {_DROPPED[key]}")
        elif key == "mcp" and isinstance(value, Mapping):
            servers = _mcp(value, gateway, report, providers, origins)
        elif key == "skills" and isinstance(value, Mapping):
            gateway["skills"] = import_skills(value, report, providers, env)
        elif key == "agents" and isinstance(value, Mapping):
            gateway_agents, agents = import_agents(value, report, env)
            if gateway_agents:
                gateway["agents"] = gateway_agents
        elif key == "plugins" and isinstance(value, Mapping):
            gateway["plugins"] = import_policy(key, value, ("enabled", "allow", "deny"), report)
        elif key == "tools" and isinstance(value, Mapping):
            gateway["tools"] = import_policy(key, value, ("profile", "allow", "alsoAllow", "deny"), report)
        elif key == "models" and isinstance(value, Mapping):
            gateway_models, model_providers = import_models(value, report, providers)
            if gateway_models:
                gateway["models"] = gateway_models
        elif key == "session" and isinstance(value, Mapping):
            session = import_session(value, report)
            if session is not None:
                gateway["session"] = session
        elif key == "channels" and isinstance(value, Mapping):
            channels = import_channels(value, config.get("bindings"), report, providers)
            _channel_defaults(value, channels, report)
        elif key != "bindings" or not isinstance(config.get("channels"), Mapping):
            report.keep_raw((key,), value)
    if env is not None and (gateway or servers or agents or channels or report.raw):
        # Only alongside something from the file: derived folders alone are no import.
        import_roots(config, env, gateway, agents, report)
    result = ImportResult(diagnostics=report.diagnostics, format="openclaw")
    kinds = {"McpServer": servers, "ModelProvider": model_providers, "Agent": agents, "Channel": channels}

    def origin_of(kind: str) -> Callable[[str], ConfigPath]:
        if kind == "McpServer":
            return lambda name: origins.get(name) or _origin(kind, name)
        return lambda name: _origin(kind, name)

    found = {
        kind: resource_docs(kind, specs, report, origin_of(kind), _raw_path) for kind, specs in kinds.items()
    }
    # Last: the others may have moved rejected values into the raw config it carries.
    gateway["config"] = report.raw
    gateway_docs = (
        resource_docs("Gateway", {"default": gateway}, report, lambda _n: (), _raw_path)
        if gateway != {"config": {}}
        else []
    )
    if not report.raw:
        gateway.pop("config")
    result.documents = {"Gateway": gateway_docs, **found}
    return result


def _mcp(
    mcp: Mapping[str, Any],
    gateway: dict[str, Any],
    report: ImportReport,
    providers: Mapping[str, Any],
    origins: dict[str, ConfigPath],
) -> dict[str, dict[str, Any]]:
    """Server specs by resource name; ``origins`` gets each one's path in the file (names may change)."""
    servers: dict[str, dict[str, Any]] = {}
    taken: set[str] = set()
    for key, value in mcp.items():
        if key == "sessionIdleTtlMs":
            gateway["mcp"] = {"sessionIdleTtlMs": value}
        elif key == "servers" and isinstance(value, Mapping):
            for raw_name, server in value.items():
                path: ConfigPath = ("mcp", "servers", raw_name)
                if not isinstance(server, Mapping):
                    report.unmapped(path, "a server entry must be an object (OpenClaw ignores it too)")
                    continue
                name = resource_name(raw_name, taken, report, path)
                if name is None:
                    continue
                spec = import_server(raw_name, server, report, providers)
                if spec is not None:
                    _drop_blocked_env(raw_name, spec, report)
                    servers[name] = spec
                    origins[name] = path
        else:
            report.keep_raw(("mcp", key), value)
    return servers


def _drop_blocked_env(name: str, spec: dict[str, Any], report: ImportReport) -> None:
    env = spec.get("env")
    if not isinstance(env, dict):
        return
    for key in [k for k in env if is_blocked_env_name(k)]:
        del env[key]
        report.changed(
            ("mcp", "servers", name, "env", key),
            "dropped: OpenClaw never passes this variable to a stdio server, and clawplane rejects it",
        )


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
        if "groupPolicy" not in spec:
            spec["groupPolicy"] = group_policy
            report.changed(
                ("channels", kind, "groupPolicy"), f"set from channels.defaults.groupPolicy ({group_policy})"
            )


def _raw_path(kind: str, name: str, loc: tuple[str | int, ...]) -> ConfigPath | None:
    """Where a rejected spec value lives in openclaw.json (None when it cannot be carried raw)."""
    if any(isinstance(p, int) for p in loc):
        return None
    rest = loc[1:]
    if kind == "ModelProvider" or (kind == "Gateway" and rest and rest[0] in _TYPED_GATEWAY):
        return None  # fully typed: spec.config refuses these sections
    if kind == "Channel" and rest[0] == "credentials":
        rest = rest[1:]
    return (*_origin(kind, name), *rest) if rest else None


def _origin(kind: str, name: str) -> ConfigPath:
    return {
        "Gateway": (),
        "McpServer": ("mcp", "servers", name),
        "ModelProvider": ("models", "providers", name),
        "Agent": ("agents", "entries", name),
        "Channel": ("channels", name),
    }[kind]
