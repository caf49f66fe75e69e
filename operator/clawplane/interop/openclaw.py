"""``clawplane import``: an existing openclaw.json → Gateway, McpServer, Agent and Channel resources.

MCP servers are canonicalized as ``openclaw doctor --fix`` / ``openclaw mcp set`` do
(``disabled``, timeout aliases in seconds, snake_case keys, ``type``). OpenClaw keys that
have a clawplane field are mapped; the others are carried as raw OpenClaw config in the
Gateway's ``spec.config`` (rendered back unchanged), each noted. Values that cannot be
carried either way (mixed ``${VAR}`` strings, SecretRefs without a clawplane form, entries
that are not objects) are left out and reported as errors. Literal secrets are kept and
reported as warnings. Nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import json5
from pydantic import ValidationError

from clawplane.diagnostics import Diagnostic
from clawplane.interop.openclaw_sections import (
    import_agents,
    import_channels,
    import_policy,
    import_skills,
)
from clawplane.interop.openclaw_servers import import_server
from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.yamlwrite import dump_documents
from clawplane.models import API_VERSION, Agent, Channel, Gateway, McpServer, Resource
from clawplane.models.base import NAME_RE
from clawplane.naming import is_blocked_env_name

FILES = {
    "Gateway": "gateway.yaml",
    "McpServer": "mcp-servers.yaml",
    "Agent": "agents.yaml",
    "Channel": "channels.yaml",
}
_MODELS: dict[str, type[Resource]] = {
    "Gateway": Gateway,
    "McpServer": McpServer,
    "Agent": Agent,
    "Channel": Channel,
}
_DROPPED = {
    "$schema": "JSON schema pointer",
    "meta": "OpenClaw's own bookkeeping (last touched version, migrations)",
}


@dataclass
class ImportResult:
    """Resource documents by kind, and everything the import changed, carried or lost."""

    documents: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when everything was imported (no ``import.unmapped`` error)."""
        return not any(d.is_error for d in self.diagnostics)

    def files(self, *, source: str = "openclaw.json") -> dict[str, str]:
        """YAML text per file name (only kinds that have documents)."""
        header = f"# Imported from {source} by `clawplane import`.\n"
        return {
            FILES[kind]: dump_documents(docs, header=header) for kind, docs in self.documents.items() if docs
        }


def load_openclaw_file(path: Path) -> dict[str, Any]:
    """Parse an openclaw.json (JSON5: comments, trailing commas and bare keys allowed)."""
    data = json5.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the top level must be an object")
    return data


def import_openclaw_config(config: Mapping[str, Any], *, source: str = "openclaw.json") -> ImportResult:
    """Turn an OpenClaw config into clawplane resource documents plus a report."""
    report = ImportReport(source)
    raw_secrets = config.get("secrets")
    providers = raw_secrets.get("providers", {}) if isinstance(raw_secrets, Mapping) else {}
    gateway: dict[str, Any] = {}
    servers: dict[str, dict[str, Any]] = {}
    agents: dict[str, dict[str, Any]] = {}
    channels: dict[str, dict[str, Any]] = {}
    for key, value in config.items():
        if key in _DROPPED:
            report.info("import.dropped", (key,), f"left out: {_DROPPED[key]}")
        elif key == "mcp" and isinstance(value, Mapping):
            servers = _mcp(value, gateway, report, providers)
        elif key == "skills" and isinstance(value, Mapping):
            gateway["skills"] = import_skills(value, report, providers)
        elif key == "agents" and isinstance(value, Mapping):
            gateway_agents, agents = import_agents(value, report)
            if gateway_agents:
                gateway["agents"] = gateway_agents
        elif key == "plugins" and isinstance(value, Mapping):
            gateway["plugins"] = import_policy(key, value, ("enabled", "allow", "deny"), report)
        elif key == "tools" and isinstance(value, Mapping):
            gateway["tools"] = import_policy(key, value, ("profile", "allow", "alsoAllow", "deny"), report)
        elif key == "channels" and isinstance(value, Mapping):
            channels = import_channels(value, config.get("bindings"), report, providers)
            _channel_defaults(value, channels, report)
        elif key != "bindings" or not isinstance(config.get("channels"), Mapping):
            report.keep_raw((key,), value)
    result = ImportResult(diagnostics=report.diagnostics)
    kinds = {"McpServer": servers, "Agent": agents, "Channel": channels}
    found = {kind: _docs(kind, specs, report) for kind, specs in kinds.items()}
    # Last: the others may have moved rejected values into the raw config it carries.
    gateway["config"] = report.raw
    gateway_docs = _docs("Gateway", {"default": gateway}, report) if gateway != {"config": {}} else []
    if not report.raw:
        gateway.pop("config")
    result.documents = {"Gateway": gateway_docs, **found}
    return result


def _mcp(
    mcp: Mapping[str, Any], gateway: dict[str, Any], report: ImportReport, providers: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    servers: dict[str, dict[str, Any]] = {}
    for key, value in mcp.items():
        if key == "sessionIdleTtlMs":
            gateway["mcp"] = {"sessionIdleTtlMs": value}
        elif key == "servers" and isinstance(value, Mapping):
            for name, server in value.items():
                path: ConfigPath = ("mcp", "servers", name)
                if not isinstance(server, Mapping):
                    report.unmapped(path, "a server entry must be an object (OpenClaw ignores it too)")
                elif not NAME_RE.match(name):
                    report.unmapped(path, f"{name!r} is not a valid resource name", "rename the server")
                else:
                    spec = import_server(name, server, report, providers)
                    if spec is not None:
                        _drop_blocked_env(name, spec, report)
                        servers[name] = spec
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


def _docs(kind: str, specs: Mapping[str, dict[str, Any]], report: ImportReport) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for name, spec in specs.items():
        doc = {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}, "spec": spec}
        if _validates(kind, name, doc, report):
            docs.append(doc)
    return docs


def _validates(kind: str, name: str, doc: dict[str, Any], report: ImportReport) -> bool:
    """Validate ``doc``; a value clawplane rejects moves to raw config (when it can) and is retried."""
    for _ in range(_MAX_RETRIES):
        try:
            _MODELS[kind].model_validate(doc)
            return True
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = _existing(doc, tuple(first["loc"]))
            message = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
            target = _raw_path(kind, name, loc)
            if target is None:
                report.unmapped(_origin(kind, name), f"the {kind} would be invalid ({message})")
                return False
            value = _remove(doc, loc)
            report.warn(
                "import.rejected-value",
                target,
                f"clawplane rejects this value ({first['msg']}); carried as raw OpenClaw config instead",
            )
            report.keep_raw(target, value)
    report.unmapped(_origin(kind, name), f"the {kind} stays invalid")
    return False


_MAX_RETRIES = 20
# Spec fields that define the resource: without them there is nothing left to import.
_ESSENTIAL = {"type", "command", "url", "transport", "hosting", "agent", "defaultAgent"}


def _existing(doc: dict[str, Any], loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    """The longest prefix of ``loc`` present in ``doc`` (pydantic appends union tags such as ``literal``)."""
    node: Any = doc
    found: list[str | int] = []
    for part in loc:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            node = node[part]
        else:
            break
        found.append(part)
    return tuple(found)


def _remove(doc: dict[str, Any], loc: tuple[str | int, ...]) -> Any:
    node: Any = doc
    for part in loc[:-1]:
        node = node[part]
    return node.pop(loc[-1])


def _raw_path(kind: str, name: str, loc: tuple[str | int, ...]) -> ConfigPath | None:
    """Where a rejected spec value lives in openclaw.json (None when it cannot be carried raw)."""
    if len(loc) < 2 or loc[0] != "spec" or loc[1] in _ESSENTIAL or any(isinstance(p, int) for p in loc):
        return None
    rest = loc[1:]
    if kind == "Channel" and rest[0] == "credentials":
        rest = rest[1:]
    return (*_origin(kind, name), *rest) if rest else None


def _origin(kind: str, name: str) -> ConfigPath:
    return {
        "Gateway": (),
        "McpServer": ("mcp", "servers", name),
        "Agent": ("agents", "entries", name),
        "Channel": ("channels", name),
    }[kind]
