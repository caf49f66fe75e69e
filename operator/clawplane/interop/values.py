"""OpenClaw values → clawplane values: env references become ``valueFrom``, literals are unescaped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.naming import is_sensitive_key
from clawplane.naming.envsubst import has_substitution, substitute, whole_reference

_VALUE_FROM_HINT = "move it to an environment variable or file and use valueFrom"


def unescape(text: str) -> str:
    """A string without substitutions as OpenClaw reads it (``$${X}`` → ``${X}``)."""
    return substitute(text, lambda _name: None)


def import_string(value: str, path: ConfigPath, report: ImportReport) -> str | None:
    """A plain (non-secret) string; None when it depends on ``${VAR}`` substitution."""
    if has_substitution(value):
        report.unmapped(
            path,
            "uses ${VAR} substitution, which clawplane does not apply to this field",
            "write the value itself",
        )
        return None
    return unescape(value)


def import_secret(
    value: Any,
    key: str,
    path: ConfigPath,
    report: ImportReport,
    providers: Mapping[str, Any],
    *,
    credential: bool = False,
) -> Any | None:
    """A secret-capable value as a clawplane ``SecretValue`` (None if lost); ``credential``: always secret."""
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        name = whole_reference(value)
        if name is not None:
            return {"valueFrom": {"env": name}}
        if has_substitution(value):
            report.unmapped(
                path,
                "mixes text with ${VAR} substitution; a clawplane value is one literal or one reference",
                "put the whole value in one environment variable and use valueFrom.env",
            )
            return None
        literal = unescape(value)
        if literal.strip() and (credential or is_sensitive_key(key)):
            report.warn("import.literal-secret", path, "literal secret kept as written", _VALUE_FROM_HINT)
        return literal
    if isinstance(value, Mapping) and isinstance(value.get("source"), str):
        return _secret_ref(value, path, report, providers)
    report.unmapped(path, f"unexpected value of type {type(value).__name__}")
    return None


def _secret_ref(
    ref: Mapping[str, Any], path: ConfigPath, report: ImportReport, providers: Mapping[str, Any]
) -> Any | None:
    source, provider, ref_id = ref.get("source"), ref.get("provider", "default"), ref.get("id")
    configured = providers.get(provider) if isinstance(provider, str) else None
    env_provider = configured is None or (
        isinstance(configured, Mapping) and configured.get("source") == "env"
    )
    if source == "env" and isinstance(ref_id, str) and env_provider:
        if isinstance(configured, Mapping) and configured.get("allowlist") is not None:
            report.warn(
                "import.secret-provider",
                path,
                f"env provider {provider!r} has an allowlist; clawplane reads the variable directly",
            )
        return {"valueFrom": {"env": ref_id}}
    if source == "file" and isinstance(configured, Mapping) and configured.get("source") == "file":
        file_path = configured.get("path")
        if configured.get("mode") == "singleValue" and ref_id == "value" and isinstance(file_path, str):
            return {"valueFrom": {"file": file_path}}
    report.unmapped(
        path,
        f"SecretRef {source}:{provider}:{ref_id} has no clawplane equivalent "
        "(only env refs and single-value file providers map to valueFrom)",
        "use valueFrom.env or valueFrom.file",
    )
    return None
