"""Secret references: resolve ``valueFrom`` values at run time, hash them, never show them.

Resolution happens only where a runtime needs the value (starting a process,
opening a connection). Everything printed or stored uses ``display_value`` (which
shows ``<redacted>`` for references and sensitive literals) or ``value_digest``
(a salted hash, so a changed secret changes a config hash without revealing it).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from clawplane.models.values import SecretValue, ValueFrom, literal_text
from clawplane.naming import REDACTED, is_sensitive_key

__all__ = [
    "REDACTED",
    "TOKEN_PREFIX",
    "SecretError",
    "display_value",
    "resolve_mapping",
    "resolve_value",
    "scrub_tokens",
    "value_digest",
]

_DIGEST_SALT = b"clawplane/v1/secret-digest"
TOKEN_PREFIX = "clawplane_"
"""Every bearer token clawplane issues starts with this, so it can be recognised anywhere."""
_TOKEN = re.compile(re.escape(TOKEN_PREFIX) + r"[A-Za-z0-9_-]{16,}")


def scrub_tokens(text: str) -> str:
    """``text`` with every clawplane bearer token replaced by ``<redacted>``."""
    return _TOKEN.sub(REDACTED, text) if TOKEN_PREFIX in text else text


class SecretError(Exception):
    """A reference could not be resolved; the message never contains a secret value."""


def resolve_value(value: SecretValue, *, base_dir: Path, environ: Mapping[str, str] | None = None) -> str:
    """The value as a string: literals as OpenClaw passes them, references read now."""
    if not isinstance(value, ValueFrom):
        return literal_text(value)
    source = value.value_from
    env = os.environ if environ is None else environ
    if source.env is not None:
        if source.env not in env:
            raise SecretError(f"environment variable {source.env} is not set")
        return env[source.env]
    if source.file is not None:
        path = Path(os.path.expanduser(source.file))
        path = path if path.is_absolute() else base_dir / path
        try:
            return path.read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise SecretError(f"cannot read secret file {path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise SecretError(f"secret file {path} is not UTF-8 text") from None
    ref = source.secret_key_ref
    assert ref is not None
    raise SecretError(
        f"secretKeyRef {ref.name}/{ref.key} can only be resolved by the Kubernetes driver; "
        "use valueFrom.env or valueFrom.file locally"
    )


def resolve_mapping(
    values: Mapping[str, SecretValue], *, base_dir: Path, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Resolve every value of an ``env`` or ``headers`` mapping."""
    return {k: resolve_value(v, base_dir=base_dir, environ=environ) for k, v in values.items()}


def value_digest(value: SecretValue, *, base_dir: Path, environ: Mapping[str, str] | None = None) -> str:
    """A stable digest of the resolved value (or of the error), safe to store and compare."""
    try:
        text = resolve_value(value, base_dir=base_dir, environ=environ)
        marker = b"ok:"
    except SecretError as exc:
        text, marker = str(exc), b"error:"
    return hashlib.sha256(_DIGEST_SALT + marker + text.encode("utf-8")).hexdigest()[:16]


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
