"""Secret references: resolve ``valueFrom`` values, hash them, never show them.

``SecretResolver`` (``resolver``) is the one place a reference becomes a value; its module
docstring describes where values come from for plan and apply. Everything printed or stored
uses ``display_value`` (``<redacted>`` for references and sensitive literals), ``value_digest``
(a salted hash, so a changed secret changes a config hash without revealing it) and
``redact`` (every form of every value this process resolved, see ``redaction``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from clawplane.models import SecretValue, ValueFrom, literal_text
from clawplane.naming import REDACTED, is_sensitive_key
from clawplane.secrets.files import FileLimits, SecretFileError, read_secret_file
from clawplane.secrets.redaction import (
    KNOWN,
    TOKEN_PREFIX,
    ValueRedactor,
    redact,
    redact_data,
    scrub_tokens,
    secret_forms,
)
from clawplane.secrets.resolver import (
    ResolvedSecrets,
    SecretError,
    SecretResolver,
    reference_path,
    value_digest_of,
)

__all__ = [
    "KNOWN",
    "REDACTED",
    "TOKEN_PREFIX",
    "FileLimits",
    "ResolvedSecrets",
    "SecretError",
    "SecretFileError",
    "SecretResolver",
    "ValueRedactor",
    "display_value",
    "read_secret_file",
    "redact",
    "redact_data",
    "reference_path",
    "resolve_mapping",
    "resolve_value",
    "scrub_tokens",
    "secret_forms",
    "value_digest",
    "value_digest_of",
]


def resolve_value(value: SecretValue, *, base_dir: Path, environ: Mapping[str, str] | None = None) -> str:
    """The value as a string, resolved by a ``SecretResolver`` over ``environ`` (default: os.environ)."""
    return SecretResolver(environ).resolve(value, base_dir=base_dir)


def resolve_mapping(
    values: Mapping[str, SecretValue], *, base_dir: Path, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Resolve every value of an ``env`` or ``headers`` mapping."""
    return SecretResolver(environ).resolve_mapping(values, base_dir=base_dir)


def value_digest(value: SecretValue, *, base_dir: Path, environ: Mapping[str, str] | None = None) -> str:
    """A stable digest of the resolved value (or of the error), safe to store and compare."""
    return value_digest_of(SecretResolver(environ).outcome(value, base_dir=base_dir))


def display_value(key: str, value: SecretValue) -> str:
    """What may be shown to a user: references and sensitive literals are redacted."""
    if isinstance(value, ValueFrom):
        source = value.value_from
        if source.env is not None:
            return f"{REDACTED} (from env {source.env})"
        if source.file is not None:
            return f"{REDACTED} (from file {source.file})"
        ref = source.secret_key_ref
        return f"{REDACTED} (from secret {ref.name}/{ref.key})" if ref else REDACTED
    if is_sensitive_key(key):
        return REDACTED
    return literal_text(value)
