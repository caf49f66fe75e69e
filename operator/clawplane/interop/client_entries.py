"""One MCP client's server entry (``command``/``args``/``env`` or ``url``/``headers``) → an McpServer spec.

Every client format keeps its servers in a map of entries of nearly one shape; what differs
is the map's key, how the transport is spelled and the reference syntax (``${NAME}``,
``${env:NAME}``, ``${input:id}``). A value that is exactly one environment reference becomes
``valueFrom.env``; one mixed with text, or a reference the client resolves itself (a prompt),
cannot be a clawplane value and is reported as a loss, never kept as a literal. Stdio entries
become ``hosting: consumer`` servers: the client spawned them, and so will its projection.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.result import ImportResult, resource_docs, resource_name
from clawplane.naming import is_blocked_env_name, is_sensitive_key

_KNOWN = {"type", "command", "args", "env", "cwd", "url", "headers"}


@dataclass(frozen=True)
class EntryFormat:
    """How one client writes its server entries."""

    client: str
    """Format name (``claude-code``, ``vscode``…), used in messages."""
    servers_key: str
    """Top-level key holding the entries (``mcpServers`` or ``servers``)."""
    reference: re.Pattern[str]
    """Matches one whole environment reference; group 1 is the variable name."""
    any_reference: re.Pattern[str]
    """Finds any reference (environment, input, predefined variable) inside a string."""
    extra_keys: frozenset[str] = frozenset()
    """Keys the client has that clawplane maps itself (handled by the client's own module)."""


DOLLAR_BRACE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
DOLLAR_BRACE_ANY = re.compile(r"\$\{[^}]*\}")
ENV_COLON = re.compile(r"^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$")


def import_entries(
    doc: Mapping[str, Any],
    fmt: EntryFormat,
    report: ImportReport,
    *,
    entry_hook: Any = None,
) -> ImportResult:
    """Every entry under ``fmt.servers_key`` as an McpServer document; other top-level keys noted."""
    servers: dict[str, dict[str, Any]] = {}
    origins: dict[str, ConfigPath] = {}
    taken: set[str] = set()
    block = doc.get(fmt.servers_key)
    if not isinstance(block, Mapping):
        report.unmapped((fmt.servers_key,), f"no {fmt.servers_key!r} object: this is no {fmt.client} config")
        block = {}
    for key in doc:
        if key != fmt.servers_key:
            report.info("import.ignored", (key,), f"not an MCP server setting of {fmt.client}; not imported")
    for raw_name, entry in block.items():
        path: ConfigPath = (fmt.servers_key, raw_name)
        if not isinstance(entry, Mapping):
            report.unmapped(path, "a server entry must be an object")
            continue
        name = resource_name(str(raw_name), taken, report, path)
        if name is None:
            continue
        spec = import_entry(entry, path, fmt, report)
        if spec is None:
            continue
        if entry_hook is not None:
            entry_hook(entry, spec, path, report)
        servers[name] = spec
        origins[name] = path
    docs = resource_docs("McpServer", servers, report, lambda n: origins[n])
    return ImportResult({"McpServer": docs}, report.diagnostics, format=fmt.client)


def import_entry(
    entry: Mapping[str, Any], path: ConfigPath, fmt: EntryFormat, report: ImportReport
) -> dict[str, Any] | None:
    """One entry as a spec, or None (reported) when it names neither a command nor a url."""
    for key in entry:
        if key not in _KNOWN and key not in fmt.extra_keys:
            report.unmapped((*path, key), f"{fmt.client} setting with no clawplane field")
    command = entry.get("command")
    url = entry.get("url")
    if isinstance(command, str) and command.strip():
        spec: dict[str, Any] = {"transport": "stdio", "hosting": "consumer", "command": command.strip()}
        args = entry.get("args")
        if isinstance(args, list):
            spec["args"] = [a for i, a in enumerate(args) if _plain(a, (*path, "args", i), fmt, report)]
        if isinstance(entry.get("cwd"), str) and _plain(entry["cwd"], (*path, "cwd"), fmt, report):
            spec["cwd"] = entry["cwd"]
        env = _values(entry.get("env"), (*path, "env"), fmt, report)
        for key in [k for k in env if is_blocked_env_name(k)]:
            del env[key]
            report.unmapped(
                (*path, "env", key), "blocked for stdio servers (OpenClaw drops it, clawplane rejects it)"
            )
        if env:
            spec["env"] = env
        return spec
    if isinstance(url, str) and url.strip():
        if not _plain(url, (*path, "url"), fmt, report):
            return None
        kind = str(entry.get("type") or "").lower()
        spec = {"transport": "sse" if kind == "sse" else "streamable-http", "url": url.strip()}
        headers = _values(entry.get("headers"), (*path, "headers"), fmt, report)
        if headers:
            spec["headers"] = headers
        return spec
    report.unmapped(path, "the entry has neither a command nor a url")
    return None


def _plain(value: Any, path: ConfigPath, fmt: EntryFormat, report: ImportReport) -> bool:
    """True for a string clawplane can keep as written (no reference the client would resolve)."""
    if not isinstance(value, str):
        report.unmapped(path, f"expected a string, got {type(value).__name__}")
        return False
    if fmt.any_reference.search(value):
        report.unmapped(
            path,
            f"{fmt.client} resolves a reference here, and clawplane keeps this field literal",
            "write the value itself",
        )
        return False
    return True


def _values(block: Any, path: ConfigPath, fmt: EntryFormat, report: ImportReport) -> dict[str, Any]:
    """``env``/``headers``: whole references → ``valueFrom.env``; literals kept (secret ones warned)."""
    if block is None:
        return {}
    if not isinstance(block, Mapping):
        report.unmapped(path, "expected an object")
        return {}
    out: dict[str, Any] = {}
    for key, value in block.items():
        here = (*path, key)
        if isinstance(value, bool | int | float) and value is not None:
            out[key] = value
            continue
        if not isinstance(value, str):
            report.unmapped(here, f"expected a string, got {type(value).__name__}")
            continue
        whole = fmt.reference.match(value)
        if whole:
            out[key] = {"valueFrom": {"env": whole.group(1)}}
        elif fmt.any_reference.search(value):
            report.unmapped(
                here,
                f"mixes text with a {fmt.client} reference; a clawplane value is one "
                "literal or one reference",
                "put the whole value in one environment variable and use valueFrom.env",
            )
        else:
            if value.strip() and is_sensitive_key(key):
                report.warn(
                    "import.literal-secret",
                    here,
                    "literal secret kept as written",
                    "move it to an environment variable and use valueFrom.env",
                )
            out[key] = value
    return out
