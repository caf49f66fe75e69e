"""A Codex ``config.toml`` → McpServer resources, one per ``[mcp_servers.<name>]`` table.

Keys follow Codex 0.171 (the inverse of ``clawplane.render.codex``): ``command``/``args``/``cwd``,
``env`` (literals), ``env_vars`` (variables passed through under their own name →
``valueFrom.env``), ``url`` (streamable HTTP: Codex speaks no SSE), ``http_headers`` (literals),
``env_http_headers`` (header → variable → ``valueFrom.env``), ``enabled``,
``startup_timeout_sec``/``tool_timeout_sec`` (seconds → milliseconds), ``enabled_tools``/
``disabled_tools`` (→ ``toolFilter``), ``supports_parallel_tool_calls`` and
``default_tools_approval_mode`` (→ ``codex.defaultToolsApprovalMode``). Anything else in the
table is reported as a loss with its file:line; the rest of the file is not about MCP servers.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from typing import Any

from clawplane.interop.positions import toml_positions
from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.result import ImportResult, resource_docs, resource_name
from clawplane.naming import is_blocked_env_name, is_sensitive_key


def import_codex_config(text: str, source: str) -> ImportResult:
    """Import the MCP servers of a Codex config.toml."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source}: not TOML ({exc})") from None
    report = ImportReport(source, toml_positions(text))
    tables = doc.get("mcp_servers")
    if not isinstance(tables, Mapping):
        report.unmapped(("mcp_servers",), "no [mcp_servers.*] tables: nothing to import")
        tables = {}
    servers: dict[str, dict[str, Any]] = {}
    origins: dict[str, ConfigPath] = {}
    taken: set[str] = set()
    for raw_name, table in tables.items():
        path: ConfigPath = ("mcp_servers", raw_name)
        if not isinstance(table, Mapping):
            report.unmapped(path, "expected a table")
            continue
        name = resource_name(raw_name, taken, report, path)
        spec = _server(table, path, report) if name is not None else None
        if name is not None and spec is not None:
            servers[name] = spec
            origins[name] = path
    docs = resource_docs("McpServer", servers, report, lambda n: origins[n])
    return ImportResult({"McpServer": docs}, report.diagnostics, format="codex")


def _server(table: Mapping[str, Any], path: ConfigPath, report: ImportReport) -> dict[str, Any] | None:
    spec: dict[str, Any] = {}
    if isinstance(table.get("command"), str):
        spec.update({"transport": "stdio", "hosting": "consumer", "command": table["command"]})
    elif isinstance(table.get("url"), str):
        spec.update({"transport": "streamable-http", "url": table["url"]})
    else:
        report.unmapped(path, "the table has neither a command nor a url")
        return None
    for key, value in table.items():
        here = (*path, key)
        if key in ("command", "url"):
            continue
        if key == "args" and isinstance(value, list):
            spec["args"] = [str(a) for a in value]
        elif key == "cwd" and isinstance(value, str):
            spec["cwd"] = value
        elif key == "env" and isinstance(value, Mapping):
            spec.setdefault("env", {}).update(_literals(value, here, report))
        elif key == "env_vars" and isinstance(value, list):
            for name in value:
                if isinstance(name, str):
                    spec.setdefault("env", {})[name] = {"valueFrom": {"env": name}}
        elif key == "http_headers" and isinstance(value, Mapping):
            spec.setdefault("headers", {}).update(_literals(value, here, report))
        elif key == "env_http_headers" and isinstance(value, Mapping):
            for header, var in value.items():
                spec.setdefault("headers", {})[header] = {"valueFrom": {"env": str(var)}}
        elif key == "enabled" and isinstance(value, bool):
            spec["enabled"] = value
        elif key in ("startup_timeout_sec", "tool_timeout_sec") and _positive(value):
            field = "connectionTimeoutMs" if key == "startup_timeout_sec" else "requestTimeoutMs"
            spec[field] = round(value * 1000)
        elif key in ("enabled_tools", "disabled_tools") and isinstance(value, list):
            flt = spec.setdefault("toolFilter", {})
            flt["include" if key == "enabled_tools" else "exclude"] = [str(t) for t in value]
        elif key == "supports_parallel_tool_calls" and isinstance(value, bool):
            spec["supportsParallelToolCalls"] = value
        elif key == "default_tools_approval_mode" and isinstance(value, str):
            spec["codex"] = {"defaultToolsApprovalMode": value}
        elif key == "bearer_token_env_var":
            report.unmapped(
                here,
                "Codex sends 'Bearer <value>'; a clawplane header is one literal or one reference",
                "keep the whole header value in one variable and use "
                "env_http_headers, or set headers.Authorization with valueFrom.env",
            )
        else:
            report.unmapped(here, "Codex setting with no clawplane field")
    for key in [k for k in spec.get("env", {}) if is_blocked_env_name(k)]:
        del spec["env"][key]
        report.unmapped((*path, "env", key), "blocked for stdio servers (clawplane rejects it)")
    if "toolFilter" in spec and not all(spec["toolFilter"].values()):
        spec["toolFilter"] = {k: v for k, v in spec["toolFilter"].items() if v}
        if not spec["toolFilter"]:
            del spec["toolFilter"]  # Codex's enabled_tools = [] (no tool) has no clawplane form
            report.unmapped((*path, "enabled_tools"), "an empty tool list has no clawplane form")
    return spec


def _positive(value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and math.isfinite(value) and value > 0


def _literals(values: Mapping[str, Any], path: ConfigPath, report: ImportReport) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, str) and value.strip() and is_sensitive_key(key):
            report.warn(
                "import.literal-secret",
                (*path, key),
                "literal secret kept as written",
                "move it to an environment variable (env_vars / env_http_headers)",
            )
        out[key] = value if isinstance(value, str | int | float | bool) else str(value)
    return out
