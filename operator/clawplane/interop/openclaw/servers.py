"""OpenClaw ``mcp.servers`` → McpServer specs, canonicalized the way ``openclaw doctor --fix`` does.

The launch and connection (command, args, env, cwd, url, headers, transport) are imported by
hand: clawplane runs or probes the server with them, so a value it cannot use is a reported
loss, never a raw copy. Every other key (timeouts, TLS, ``auth``/``oauth``, tool filter,
Codex projection, keys this OpenClaw does not know) goes through ``openclaw.keys``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from clawplane.interop.openclaw.keys import Home, KeyImporter
from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.values import import_secret, import_string
from clawplane.models import LEGACY_TYPE_ALIASES, McpServerSpec, Transport
from clawplane.schema.openclaw import node_at

# OpenClaw 2026.9.6 src/commands/doctor/shared/legacy-config-migrations (timeouts are seconds).
_TIMEOUT_ALIASES = (
    ("connectTimeout", "connectionTimeoutMs"),
    ("connect_timeout", "connectionTimeoutMs"),
    ("timeout", "requestTimeoutMs"),
)
# src/config/mcp-config-normalize.ts: legacy key → canonical key, with the type it must have.
_KEY_ALIASES = (
    ("workingDirectory", "cwd", str),
    ("supports_parallel_tool_calls", "supportsParallelToolCalls", bool),
    ("ssl_verify", "sslVerify", bool),
    ("client_cert", "clientCert", str),
    ("client_key", "clientKey", str),
)
# Keys clawplane imports by hand (the launch and connection it uses itself); the others by name.
_HANDLED = frozenset({"enabled", "command", "args", "env", "cwd", "url", "headers", "transport", "type"})


def canonicalize_server(server: Mapping[str, Any], path: ConfigPath, report: ImportReport) -> dict[str, Any]:
    """The server as ``openclaw doctor --fix`` leaves it (disabled, timeout aliases, snake_case, type)."""
    out = dict(server)
    if isinstance(out.get("disabled"), bool):
        disabled = out.pop("disabled")
        if not isinstance(out.get("enabled"), bool):
            out["enabled"] = not disabled
        report.changed(
            (*path, "disabled"),
            f'"disabled: {str(disabled).lower()}" → "enabled: {str(out["enabled"]).lower()}"',
        )
    for alias, canonical in _TIMEOUT_ALIASES:
        if alias not in out:
            continue
        value = out.pop(alias)
        valid = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
        if canonical not in out and valid and math.isfinite(value * 1000):
            out[canonical] = _number(value * 1000)
            report.changed((*path, alias), f"{alias} {value} s → {canonical} {out[canonical]} ms")
        else:
            report.changed((*path, alias), f"{alias} removed ({canonical} already set or alias invalid)")
    for alias, canonical, kind in _KEY_ALIASES:
        if alias not in out:
            continue
        value = out.pop(alias)
        if isinstance(value, kind) and not isinstance(out.get(canonical), kind):
            out[canonical] = value
        report.changed((*path, alias), f"{alias} → {canonical}")
    codex = out.get("codex")
    if isinstance(codex, Mapping) and "default_tools_approval_mode" in codex:
        codex = dict(codex)
        mode = codex.pop("default_tools_approval_mode")
        if isinstance(mode, str) and not isinstance(codex.get("defaultToolsApprovalMode"), str):
            codex["defaultToolsApprovalMode"] = mode
        out["codex"] = codex
        report.changed((*path, "codex", "default_tools_approval_mode"), "→ codex.defaultToolsApprovalMode")
    legacy_type = out.get("type")
    if isinstance(legacy_type, str) and legacy_type.strip().lower() in LEGACY_TYPE_ALIASES:
        alias_transport = LEGACY_TYPE_ALIASES[legacy_type.strip().lower()]
        del out["type"]
        if not isinstance(out.get("transport"), str) and alias_transport is not Transport.STDIO:
            out["transport"] = alias_transport.value
        report.changed((*path, "type"), f'type "{legacy_type}" → transport "{out.get("transport", "stdio")}"')
    return out


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def import_server(
    name: str,
    server: Mapping[str, Any],
    report: ImportReport,
    providers: Mapping[str, Any],
    *,
    resource: str | None = None,
) -> dict[str, Any] | None:
    """An McpServer ``spec`` for one OpenClaw server entry (None if it cannot be imported).

    ``resource``: the McpServer's name when it differs from ``name`` (the rendered entry's key).
    """
    path: ConfigPath = ("mcp", "servers", name)
    raw = canonicalize_server(server, path, report)
    spec: dict[str, Any] = {}
    if isinstance(raw.get("enabled"), bool):
        spec["enabled"] = raw["enabled"]
    command = raw.get("command")
    if isinstance(command, str) and command.strip():
        _stdio(spec, raw, path, report, providers)
    elif isinstance(raw.get("url"), str) and raw["url"].strip():
        _remote(spec, raw, path, report, providers)
    else:
        report.unmapped(path, "neither a command nor a url; OpenClaw skips this server too")
        return None
    rest = {key: value for key, value in raw.items() if key not in _HANDLED}
    if not isinstance(raw.get("enabled"), bool) and "enabled" in raw:
        rest["enabled"] = raw["enabled"]  # not a boolean: its check says so
    importer = KeyImporter(report, providers, Home(path, ("mcp", "servers", resource or name)))
    spec.update(importer.spec(rest, node_at(("mcp", "servers", "*")), McpServerSpec))
    if "auth" in spec or "oauth" in spec:
        report.warn(
            "import.server-auth",
            (*path, "auth" if "auth" in spec else "oauth"),
            "OpenClaw authenticates this server; clawplane "
            "cannot, so its health checks and tool discovery will fail",
        )
    return spec


def _stdio(
    spec: dict[str, Any],
    raw: Mapping[str, Any],
    path: ConfigPath,
    report: ImportReport,
    providers: Mapping[str, Any],
) -> None:
    # OpenClaw spawns the server itself; keep it that way (hosting: clawplane is an opt-in).
    spec.update({"transport": "stdio", "hosting": "consumer", "command": raw["command"].strip()})
    for key in ("url", "transport", "type"):
        if key in raw and not (key == "transport" and raw[key] == "stdio"):
            report.warn(
                "import.ignored-by-openclaw",
                (*path, key),
                f"{key} is ignored: OpenClaw runs a server with a command over stdio",
            )
    args = raw.get("args")
    if isinstance(args, list):
        kept = [
            import_string(a, (*path, "args", i), report) for i, a in enumerate(args) if isinstance(a, str)
        ]
        if len(kept) != len(args):
            report.changed((*path, "args"), "non-string args dropped (OpenClaw drops them too)")
        if kept:
            spec["args"] = [a for a in kept if a is not None]
    env = raw.get("env")
    if isinstance(env, Mapping):
        spec["env"] = _secrets(env, (*path, "env"), report, providers)
    cwd = raw.get("cwd")
    if isinstance(cwd, str) and cwd:
        cwd_value = import_string(cwd, (*path, "cwd"), report)
        if cwd_value is not None:
            spec["cwd"] = cwd_value
            if not cwd_value.startswith(("/", "~")):
                report.warn(
                    "import.relative-path",
                    (*path, "cwd"),
                    "relative cwd: OpenClaw resolves it "
                    "against its working directory, clawplane against the resource file",
                )


def _remote(
    spec: dict[str, Any],
    raw: Mapping[str, Any],
    path: ConfigPath,
    report: ImportReport,
    providers: Mapping[str, Any],
) -> None:
    transport = raw.get("transport")
    if transport in (Transport.SSE.value, Transport.STREAMABLE_HTTP.value):
        spec["transport"] = transport
    else:
        if isinstance(raw.get("type"), str):
            report.warn(
                "import.unknown-type",
                (*path, "type"),
                f'unknown type "{raw["type"]}": OpenClaw connects over sse, and so will clawplane',
            )
        spec["transport"] = Transport.SSE.value
    url = import_string(raw["url"].strip(), (*path, "url"), report)
    if url is not None:
        spec["url"] = url
    headers = raw.get("headers")
    if isinstance(headers, Mapping):
        spec["headers"] = _secrets(headers, (*path, "headers"), report, providers)


def _secrets(
    values: Mapping[str, Any], path: ConfigPath, report: ImportReport, providers: Mapping[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        imported = import_secret(value, str(key), (*path, str(key)), report, providers)
        if imported is not None:
            out[str(key)] = imported
    return out
