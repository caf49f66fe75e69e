"""OpenClaw's legacy MCP server spellings: reported with the canonical key to use.

``type`` is accepted with a warning (it is a documented alias of ``transport``); an
unknown ``type`` value too, since OpenClaw keeps it and infers the transport without it;
``disabled`` and snake_case or renamed keys are errors, because a declarative config
should say exactly one thing. ``clawplane doctor --fix`` rewrites all of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawplane.diagnostics import Diagnostic, Location, Severity
from clawplane.loading import PathT, SourceDocument, format_path
from clawplane.models import LEGACY_TYPE_ALIASES

# legacy key → canonical key (OpenClaw's doctor and `mcp set` canonicalize the same way).
LEGACY_SERVER_KEYS: dict[str, str] = {
    "connectTimeout": "connectionTimeoutMs",
    "connect_timeout": "connectionTimeoutMs",
    "connectionTimeout": "connectionTimeoutMs",
    "timeout": "requestTimeoutMs",
    "workingDirectory": "cwd",
    "working_directory": "cwd",
    "supports_parallel_tool_calls": "supportsParallelToolCalls",
    "ssl_verify": "sslVerify",
    "client_cert": "clientCert",
    "client_key": "clientKey",
    "tool_filter": "toolFilter",
}
LEGACY_CODEX_KEYS: dict[str, str] = {"default_tools_approval_mode": "defaultToolsApprovalMode"}
SECONDS_KEYS = frozenset({"connectTimeout", "connect_timeout", "connectionTimeout", "timeout"})


def check_legacy_mcp_spec(
    doc: SourceDocument, spec: dict[str, Any], resource: str
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """Report legacy keys in an McpServer spec; returns the spec without them for model validation."""
    found: list[Diagnostic] = []
    clean = dict(spec)

    def report(path: PathT, severity: Severity, code: str, message: str, hint: str) -> None:
        loc = doc.location(doc.positions.of_key(path))
        found.append(
            Diagnostic(
                severity,
                code,
                message,
                Location(loc.file, loc.line, loc.column),
                format_path(path),
                hint,
                resource,
            )
        )

    if "disabled" in clean:
        value = clean.pop("disabled")
        enabled = "false" if value is True else "true"
        report(
            ("spec", "disabled"),
            Severity.ERROR,
            "mcp.legacy-disabled",
            'unsupported key "disabled"',
            f"use enabled: {enabled} instead (clawplane doctor --fix does this)",
        )
    for old, new in LEGACY_SERVER_KEYS.items():
        if old in clean:
            clean.pop(old)
            unit = " (in milliseconds)" if old in SECONDS_KEYS else ""
            report(
                ("spec", old),
                Severity.ERROR,
                "mcp.legacy-key",
                f'legacy key "{old}" is not supported',
                f'use "{new}"{unit} instead (clawplane doctor --fix does this)',
            )
    codex = clean.get("codex")
    if isinstance(codex, dict):
        codex = dict(codex)
        for old, new in LEGACY_CODEX_KEYS.items():
            if old in codex:
                codex.pop(old)
                report(
                    ("spec", "codex", old),
                    Severity.ERROR,
                    "mcp.legacy-key",
                    f'legacy key "codex.{old}" is not supported',
                    f'use "codex.{new}" instead',
                )
        clean["codex"] = codex
    legacy_type = clean.get("type")
    if isinstance(legacy_type, str):
        mapped = LEGACY_TYPE_ALIASES.get(legacy_type.strip().lower())
        if mapped is not None:
            report(
                ("spec", "type"),
                Severity.WARNING,
                "mcp.legacy-type",
                f'"type: {legacy_type}" is a legacy alias, use transport',
                f"write transport: {mapped.value} instead of type: {legacy_type}",
            )
        else:
            # OpenClaw keeps an unknown type and ignores it when choosing the transport.
            report(
                ("spec", "type"),
                Severity.WARNING,
                "mcp.unknown-type",
                unknown_type_message(legacy_type, clean),
                "remove type, or set transport: stdio, sse or streamable-http "
                "(clawplane doctor --fix does this)",
            )
    return clean, found


def inferred_transport(spec: Mapping[str, Any]) -> str | None:
    """The transport a spec without a usable ``type`` gets: command → stdio, else url → sse."""
    command, url = spec.get("command"), spec.get("url")
    if isinstance(command, str) and command.strip():
        return "stdio"
    if isinstance(url, str) and url.strip():
        return "sse"
    return None


def unknown_type_message(legacy_type: str, spec: Mapping[str, Any]) -> str:
    """What an unknown ``type`` value means: nothing, the transport comes from elsewhere."""
    head = f'unknown server type "{legacy_type}" is ignored'
    if isinstance(spec.get("transport"), str):
        return f"{head} (transport is set)"
    inferred = inferred_transport(spec)
    if inferred is None:
        return head
    source = "command" if inferred == "stdio" else "url"
    return f"{head}; the transport is {inferred} (from {source}), as in OpenClaw"
