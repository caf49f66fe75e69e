"""``clawplane import``: an existing openclaw.json → Gateway, McpServer, ModelProvider, Agent, Channel.

Every key lands under ``spec`` of the resource that stands for its object, by its OpenClaw
name (``clawplane.interop.openclaw.keys``): ``mcp.servers.<name>`` → an McpServer,
``agents.entries.<id>`` → an Agent, ``channels.<type>`` → a Channel, ``models.providers.<id>``
→ a ModelProvider, every other section (``gateway``, ``hooks``, ``tools``, ``plugins``,
``agents.defaults``, ``mcp.apps``, ``channels.defaults``, ``bindings`` no Channel expresses, …)
→ the Gateway. MCP servers are canonicalized as ``openclaw doctor --fix`` / ``openclaw mcp
set`` do (``disabled``, timeout aliases in seconds, snake_case keys, ``type``). Secrets stay
references (``valueFrom``, or SecretRefs as written); literal secrets are kept and reported
as warnings. The Gateway's raw ``spec.config`` holds only what no typed home can hold
verbatim: keys this OpenClaw does not know (listed in ``spec.configUnchecked``), strings
that mix text with ``${VAR}``, values clawplane's types refuse. Values that cannot be
carried either way are left out and reported with their file:line; one bad entry never
costs the rest of its resource. ``models`` and ``session`` are typed throughout
(``interop.openclaw.models``), so nothing of them is ever carried raw.

The skill tiers OpenClaw finds implicitly (managed, personal, bundled, each agent's
workshop and default workspace) become explicit Gateway ``skills.roots`` and
``agents.stateDir``, computed from the environment the import runs in
(``clawplane.interop.openclaw.env``), so the imported folder sees the same skills.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawplane.interop.jsonload import load_json5
from clawplane.interop.openclaw.env import OpenClawEnv
from clawplane.interop.openclaw.keys import Home, KeyImporter
from clawplane.interop.openclaw.models import import_models, import_session
from clawplane.interop.openclaw.roots import import_roots
from clawplane.interop.openclaw.sections import import_agents, import_channels, prepare_skills
from clawplane.interop.openclaw.servers import import_server
from clawplane.interop.positions import Positions, json5_positions
from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.result import ImportResult, resource_docs, resource_name
from clawplane.models import GatewaySpec
from clawplane.naming import is_blocked_env_name
from clawplane.schema.openclaw import node_at

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
    data = _utf16_joined(load_json5(text, name), name)
    if not isinstance(data, dict):
        raise ValueError(f"{name}: the top level must be an object")
    return data, json5_positions(text)


def _utf16_joined(value: Any, name: str) -> Any:
    """Strings with ``\\uD83E\\uDD9E``-style escapes joined into characters, as JavaScript reads them.

    json5 decodes each escape of a surrogate pair on its own; such a string cannot even be written
    out again. A lone surrogate, which JavaScript keeps but no UTF-8 file can hold, is refused.
    """
    if isinstance(value, str):
        if not any("\ud800" <= c <= "\udfff" for c in value):
            return value
        try:
            return value.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise ValueError(
                f"{name}: a string holds a lone UTF-16 surrogate ({value[:40]!r}), which no YAML or JSON "
                "file clawplane writes can hold; replace the \\u escape with the character it was meant to be"
            ) from None
    if isinstance(value, dict):
        return {_utf16_joined(k, name): _utf16_joined(v, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_utf16_joined(v, name) for v in value]
    return value


@dataclass
class _Split:
    """An openclaw.json taken apart: the Gateway's sections (still to walk) and the other resources."""

    sections: dict[str, Any] = field(default_factory=dict)
    """Sections the Gateway declares by name, prepared for ``openclaw.keys``."""
    typed: dict[str, Any] = field(default_factory=dict)
    """The Gateway's fully typed sections (``models``, ``session``), already imported."""
    default_agent: str | None = None
    moved: dict[ConfigPath, ConfigPath] = field(default_factory=dict)
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    origins: dict[str, ConfigPath] = field(default_factory=dict)
    """Each McpServer's path in the file (names may change)."""
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    model_providers: dict[str, dict[str, Any]] = field(default_factory=dict)


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
    providers = providers if isinstance(providers, Mapping) else {}
    split = _split(config, report, providers, env)
    importer = KeyImporter(report, providers, Home((), ()), split.moved)
    gateway = importer.spec(split.sections, node_at(()), GatewaySpec)
    gateway.update(split.typed)
    if split.default_agent is not None:
        gateway.setdefault("agents", {})["defaultAgent"] = split.default_agent
    if env is not None and (gateway or split.servers or split.agents or split.channels or report.raw):
        # Only alongside something from the file: derived folders alone are no import.
        import_roots(config, env, gateway, split.agents, report)
    result = ImportResult(diagnostics=report.diagnostics, format="openclaw")
    kinds = {
        "McpServer": split.servers,
        "ModelProvider": split.model_providers,
        "Agent": split.agents,
        "Channel": split.channels,
    }

    def origin_of(kind: str) -> Callable[[str], ConfigPath]:
        if kind == "McpServer":
            return lambda name: split.origins.get(name) or _origin(kind, name)
        return lambda name: _origin(kind, name)

    found_docs = {
        kind: resource_docs(kind, specs, report, origin_of(kind), _raw_path) for kind, specs in kinds.items()
    }
    # Last: the others may have moved rejected values into the raw config it carries.
    gateway["config"] = report.raw
    gateway["configUnchecked"] = report.unchecked
    gateway_docs = (
        resource_docs("Gateway", {"default": gateway}, report, lambda _n: (), _raw_path)
        if gateway != {"config": {}, "configUnchecked": []}
        else []
    )
    for key in ("config", "configUnchecked"):
        if not gateway[key]:
            del gateway[key]
    result.documents = {"Gateway": gateway_docs, **found_docs}
    return result


def _split(
    config: Mapping[str, Any], report: ImportReport, providers: Mapping[str, Any], env: OpenClawEnv | None
) -> _Split:
    out = _Split()
    for key, value in config.items():
        if key in _DROPPED:
            report.info("import.dropped", (key,), f"left out: {_DROPPED[key]}")
        elif key == "mcp" and isinstance(value, Mapping):
            out.servers = _mcp_servers(value.get("servers"), report, providers, out.origins)
            rest = {k: v for k, v in value.items() if k != "servers"}
            if rest:
                out.sections["mcp"] = rest
        elif key == "skills" and isinstance(value, Mapping):
            out.sections["skills"] = prepare_skills(value, report, env)
        elif key == "agents" and isinstance(value, Mapping):
            agents = import_agents(value, report, providers, env)
            out.agents, out.default_agent = agents.specs, agents.default_agent
            if agents.gateway:
                out.sections["agents"] = agents.gateway
        elif key == "models" and isinstance(value, Mapping):
            models, out.model_providers = import_models(value, report, providers)
            if models:
                out.typed["models"] = models
        elif key == "session" and isinstance(value, Mapping):
            session = import_session(value, report)
            if session is not None:
                out.typed["session"] = session
        elif key == "channels" and isinstance(value, Mapping):
            channels = import_channels(value, config.get("bindings"), report, providers)
            out.channels = channels.specs
            if channels.gateway:
                out.sections["channels"] = channels.gateway
            if channels.bindings is not None:
                out.sections["bindings"] = channels.bindings
                out.moved = channels.moved
        elif key != "bindings" or not isinstance(config.get("channels"), Mapping):
            out.sections[key] = value
    return out


def _mcp_servers(
    servers_block: Any,
    report: ImportReport,
    providers: Mapping[str, Any],
    origins: dict[str, ConfigPath],
) -> dict[str, dict[str, Any]]:
    """Server specs by resource name; ``origins`` gets each one's path in the file (names may change)."""
    servers: dict[str, dict[str, Any]] = {}
    if not isinstance(servers_block, Mapping):
        if servers_block is not None:
            report.unmapped(("mcp", "servers"), "mcp.servers must be an object of servers")
        return servers
    taken: set[str] = set()
    for raw_name, server in servers_block.items():
        path: ConfigPath = ("mcp", "servers", raw_name)
        if not isinstance(server, Mapping):
            report.unmapped(path, "a server entry must be an object (OpenClaw ignores it too)")
            continue
        name = resource_name(raw_name, taken, report, path)
        if name is None:
            continue
        spec = import_server(raw_name, server, report, providers, resource=name)
        if spec is not None:
            _drop_blocked_env(raw_name, spec, report)
            servers[name] = spec
            origins[name] = path
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


def _raw_path(kind: str, name: str, loc: tuple[str | int, ...]) -> ConfigPath | None:
    """Where a rejected spec value lives in openclaw.json (None when it cannot be carried raw)."""
    if any(isinstance(p, int) for p in loc):
        return None
    rest = loc[1:]
    if kind == "ModelProvider" or (kind == "Gateway" and rest and rest[0] in _TYPED_GATEWAY):
        return None  # fully typed: spec.config refuses these sections
    return (*_origin(kind, name), *rest) if rest else None


def _origin(kind: str, name: str) -> ConfigPath:
    return {
        "Gateway": (),
        "McpServer": ("mcp", "servers", name),
        "ModelProvider": ("models", "providers", name),
        "Agent": ("agents", "entries", name),
        "Channel": ("channels", name),
    }[kind]
