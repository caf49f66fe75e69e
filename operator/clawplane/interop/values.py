"""OpenClaw values → clawplane values: env references become ``valueFrom``, literals are unescaped."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.naming import has_substitution, is_sensitive_key, substitute, whole_reference

VALUE_FROM_HINT = "move it to an environment variable or file and use valueFrom"
# camelCase credential names (``accessToken``, ``clientSecret``, ``privateKey``), which
# ``is_sensitive_key`` (OpenClaw's rule for env and header names) does not split.
_CREDENTIAL_WORD = re.compile(
    r"[a-z0-9](?:Token|Secret|Password|ApiKey|PrivateKey)\Z|^(?:apiKey|privateKey)\Z"
)
_SECRET_REF_KEYS = frozenset({"source", "provider", "id"})


def unescape(text: str) -> str:
    """A string without substitutions as OpenClaw reads it (``$${X}`` → ``${X}``)."""
    return substitute(text, lambda _name: None)


def looks_secret(key: str) -> bool:
    """Whether a key names a credential: OpenClaw's env/header rule, or a camelCase credential name."""
    return is_sensitive_key(key) or bool(_CREDENTIAL_WORD.search(key))


def is_secret_ref(value: Any) -> bool:
    """Whether ``value`` is written as an OpenClaw SecretRef (``{source, provider, id}``)."""
    return (
        isinstance(value, Mapping) and isinstance(value.get("source"), str) and set(value) <= _SECRET_REF_KEYS
    )


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
            report.warn("import.literal-secret", path, "literal secret kept as written", VALUE_FROM_HINT)
        return literal
    if isinstance(value, Mapping) and isinstance(value.get("source"), str):
        found = secret_ref_value(value, path, report, providers)
        if found is not None:
            return found
        report.unmapped(
            path,
            f"SecretRef {describe_ref(value)} has no clawplane equivalent "
            "(only env refs and single-value file providers map to valueFrom)",
            "use valueFrom.env or valueFrom.file",
        )
        return None
    report.unmapped(path, f"unexpected value of type {type(value).__name__}")
    return None


def describe_ref(ref: Mapping[str, Any]) -> str:
    """``source:provider:id`` of a SecretRef, as OpenClaw names one in its messages."""
    return f"{ref.get('source')}:{ref.get('provider', 'default')}:{ref.get('id')}"


def secret_ref_value(
    ref: Mapping[str, Any], path: ConfigPath, report: ImportReport, providers: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The ``valueFrom`` a SecretRef stands for (env refs, single-value file providers), else None."""
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
    return None
